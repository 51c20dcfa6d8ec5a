#include "CImageDecode.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct cimg_resampler {
  int source_width, source_height, width, height;
  int *column_of;   // source column -> target column
  int *row_of;      // source row -> target row
  int *columns_in;  // target column -> number of source columns averaged into it
  int *rows_in;
  uint64_t *sums;   // per target pixel: red, green, blue (premultiplied by alpha), alpha
};

void cimg_fit(int width, int height, int max_width, int max_height, int enlarge,
              int *out_width, int *out_height) {
  int64_t w = width > 0 ? width : 1, h = height > 0 ? height : 1;
  int64_t mw = max_width > 0 ? max_width : 1, mh = max_height > 0 ? max_height : 1;
  if (!enlarge && w <= mw && h <= mh) {
    *out_width = (int)w;
    *out_height = (int)h;
  } else if (w * mh >= h * mw) {  // the width is the tighter bound
    *out_width = (int)mw;
    *out_height = (int)((h * mw + w / 2) / w);
  } else {
    *out_height = (int)mh;
    *out_width = (int)((w * mh + h / 2) / h);
  }
  if (*out_width < 1) *out_width = 1;
  if (*out_height < 1) *out_height = 1;
}

static int *index_map(int source, int target, int *counts) {
  int *map = malloc(sizeof(int) * (size_t)source);
  if (map == NULL) return NULL;
  for (int i = 0; i < source; i++) {
    map[i] = (int)((int64_t)i * target / source);
    counts[map[i]]++;
  }
  return map;
}

cimg_resampler *cimg_resampler_create(int source_width, int source_height, int width,
                                      int height) {
  if (width < 1 || height < 1 || width > source_width || height > source_height) return NULL;
  cimg_resampler *r = calloc(1, sizeof *r);
  if (r == NULL) return NULL;
  r->source_width = source_width;
  r->source_height = source_height;
  r->width = width;
  r->height = height;
  r->columns_in = calloc((size_t)width, sizeof(int));
  r->rows_in = calloc((size_t)height, sizeof(int));
  r->sums = calloc((size_t)width * (size_t)height * 4, sizeof(uint64_t));
  if (r->columns_in && r->rows_in && r->sums) {
    r->column_of = index_map(source_width, width, r->columns_in);
    r->row_of = index_map(source_height, height, r->rows_in);
  }
  if (r->column_of == NULL || r->row_of == NULL) {
    cimg_resampler_free(r);
    return NULL;
  }
  return r;
}

void cimg_resampler_add(cimg_resampler *r, int y, int x0, int dx, const uint8_t *rgba,
                        int count) {
  if (y < 0 || y >= r->source_height || x0 < 0 || dx < 1) return;
  uint64_t *row = r->sums + (size_t)r->row_of[y] * (size_t)r->width * 4;
  for (int i = 0, x = x0; i < count && x < r->source_width; i++, x += dx) {
    const uint8_t *p = rgba + (size_t)i * 4;
    uint64_t *sum = row + (size_t)r->column_of[x] * 4;
    sum[0] += (uint64_t)p[0] * p[3];
    sum[1] += (uint64_t)p[1] * p[3];
    sum[2] += (uint64_t)p[2] * p[3];
    sum[3] += p[3];
  }
}

int cimg_resampler_finish(const cimg_resampler *r, cimg_image *out) {
  out->pixels = malloc((size_t)r->width * (size_t)r->height * 4);
  if (out->pixels == NULL) {
    snprintf(out->error, CIMG_ERROR_LENGTH, "out of memory");
    return -1;
  }
  out->width = r->width;
  out->height = r->height;
  for (int ty = 0; ty < r->height; ty++) {
    for (int tx = 0; tx < r->width; tx++) {
      size_t at = ((size_t)ty * (size_t)r->width + (size_t)tx) * 4;
      const uint64_t *sum = r->sums + at;
      uint64_t area = (uint64_t)r->columns_in[tx] * (uint64_t)r->rows_in[ty];
      uint64_t alpha = sum[3];
      for (int c = 0; c < 3; c++) {
        out->pixels[at + c] = alpha ? (uint8_t)((sum[c] + alpha / 2) / alpha) : 0;
      }
      out->pixels[at + 3] = (uint8_t)((alpha + area / 2) / area);
    }
  }
  return 0;
}

void cimg_resampler_free(cimg_resampler *r) {
  if (r == NULL) return;
  free(r->column_of);
  free(r->row_of);
  free(r->columns_in);
  free(r->rows_in);
  free(r->sums);
  free(r);
}

void cimg_image_free(cimg_image *image) {
  free(image->pixels);
  image->pixels = NULL;
}

void cimg_free(void *memory) { free(memory); }
