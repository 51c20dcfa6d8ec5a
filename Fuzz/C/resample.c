// libFuzzer target for the resampler: the input picks the source and target sizes and the mode,
// then feeds rows (row, first column, step, count) with pixels from the rest of the input.
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "CImageDecode.h"

static int take(const uint8_t **data, size_t *size, int bytes) {
  int value = 0;
  for (int i = 0; i < bytes && *size > 0; i++, (*data)++, (*size)--) value = value << 8 | **data;
  return value;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  int source_width = 1 + take(&data, &size, 2) % 3000;
  int source_height = 1 + take(&data, &size, 2) % 3000;
  int width = 1 + take(&data, &size, 2) % 2100;
  int height = 1 + take(&data, &size, 2) % 2100;
  int in_order = take(&data, &size, 1) & 1;
  int fitted_width, fitted_height;
  cimg_fit(source_width, source_height, width, height, take(&data, &size, 1) & 1, &fitted_width,
           &fitted_height);
  cimg_resampler *r = cimg_resampler_create(source_width, source_height, width, height, in_order);
  if (r == NULL) return 0;
  while (size >= 7) {
    int y = take(&data, &size, 2) % (source_height + 2) - 1;
    int x0 = take(&data, &size, 2) % (source_width + 2) - 1;
    int dx = take(&data, &size, 1) % 9;
    int count = take(&data, &size, 2);
    if ((size_t)count > size / 4) count = (int)(size / 4);
    (void)cimg_resampler_wants(r, y);
    cimg_resampler_add(r, y, x0, dx, data, count);
    data += (size_t)count * 4;
    size -= (size_t)count * 4;
  }
  cimg_image out;
  memset(&out, 0, sizeof out);
  if (cimg_resampler_finish(r, &out) == 0) cimg_image_free(&out);
  cimg_resampler_free(r);
  return 0;
}
