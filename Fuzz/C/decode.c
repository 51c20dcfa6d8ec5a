// libFuzzer target for one C decoder of CImageDecode, chosen at build time with
// -DCIMG_FUZZ_DECODER=cimg_decode_png (or _jpeg, _gif, _webp), and the libraries it needs with
// -DCIMG_FUZZ_LIBRARIES=CIMG_LIBRARY_PNG (comma-separated). The whole input is the image; the
// preview size is derived from its length so seeds stay plain image files.
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "CImageDecode.h"

// The decoders open their library on first use, as in forum. One that cannot be loaded would
// turn every input into the same error and fuzz nothing, so the target stops before it starts.
int LLVMFuzzerInitialize(int *argc, char ***argv) {
  (void)argc;
  (void)argv;
  static const cimg_library needed[] = {CIMG_FUZZ_LIBRARIES};
  for (size_t i = 0; i < sizeof needed / sizeof needed[0]; i++) {
    char reason[CIMG_ERROR_LENGTH];
    if (cimg_library_load(needed[i], reason, sizeof reason) != 0) {
      fprintf(stderr, "cannot load %s: %s\n", cimg_library_soname(needed[i]), reason);
      exit(1);
    }
  }
  return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  cimg_limits limits = {100000000, 30000, 100, 48 << 20, 2.0, NULL};
  int width = 1 + (int)(size % 97), height = 1 + (int)(size / 97 % 61);
  cimg_image out;
  if (CIMG_FUZZ_DECODER(data, size, width, height, &limits, &out) == 0) {
    // Touch every pixel so a short buffer shows up under ASan.
    volatile uint8_t sum = 0;
    for (size_t i = 0; i < (size_t)out.width * (size_t)out.height * 4; i++) sum += out.pixels[i];
    cimg_image_free(&out);
  }
  return 0;
}
