#include "CImageDecode.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

// At most this many source rows are averaged into one target row.
#define CIMG_ROWS_AVERAGED 4

struct cimg_resampler {
  int source_width, source_height, width, height;
  int in_order;
  int *column_of;   // source column -> target column
  int *row_of;      // source row -> target row
  int *columns_in;  // target column -> number of source columns averaged into it
  int *rows_in;     // target row -> number of source rows averaged into it (see row_step)
  int *row_start;   // target row -> its first source row
  int *row_step;    // target row -> every how manyth of its source rows is averaged
  // In order: one target row of sums, 64-bit (red, green, blue premultiplied by alpha, alpha),
  // and the target row they belong to (-1 before the first row).
  uint64_t *row_sums;
  int current_row;
  // Any order: the same sums for every target pixel, in 32 bits.
  uint32_t *sums;
  uint8_t *pixels;  // the output, written as target rows complete
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

cimg_resampler *cimg_resampler_create(int source_width, int source_height, int width, int height,
                                      int rows_in_order) {
  if (width < 1 || height < 1 || width > source_width || height > source_height ||
      width > CIMG_MAX_OUTPUT_SIDE || height > CIMG_MAX_OUTPUT_SIDE) {
    return NULL;
  }
  // 32-bit sums of colour times alpha hold 65,025 per source pixel; a target pixel averages at
  // most CIMG_ROWS_AVERAGED rows of source_width / width + 1 columns.
  int64_t per_pixel = ((int64_t)source_width / width + 1) * CIMG_ROWS_AVERAGED;
  if (!rows_in_order && per_pixel > (int64_t)(UINT32_MAX / (255 * 255))) return NULL;
  cimg_resampler *r = calloc(1, sizeof *r);
  if (r == NULL) return NULL;
  r->source_width = source_width;
  r->source_height = source_height;
  r->width = width;
  r->height = height;
  r->in_order = rows_in_order;
  r->current_row = -1;
  r->columns_in = calloc((size_t)width, sizeof(int));
  r->rows_in = calloc((size_t)height, sizeof(int));
  r->pixels = calloc((size_t)width * (size_t)height, 4);
  int sums_ok = rows_in_order
                    ? (r->row_sums = calloc((size_t)width * 4, sizeof(uint64_t))) != NULL
                    : (r->sums = calloc((size_t)width * (size_t)height * 4, sizeof(uint32_t))) !=
                          NULL;
  if (r->columns_in && r->rows_in && r->pixels && sums_ok) {
    r->column_of = index_map(source_width, width, r->columns_in);
    r->row_of = index_map(source_height, height, r->rows_in);
  }
  r->row_start = calloc((size_t)height, sizeof(int));
  r->row_step = calloc((size_t)height, sizeof(int));
  if (r->column_of == NULL || r->row_of == NULL || r->row_start == NULL || r->row_step == NULL) {
    cimg_resampler_free(r);
    return NULL;
  }
  // A target row made of many source rows averages a few evenly spaced ones: the preview looks
  // the same, and the cost per source pixel falls with the shrink.
  for (int y = source_height - 1; y >= 0; y--) r->row_start[r->row_of[y]] = y;
  for (int ty = 0; ty < height; ty++) {
    int step = (r->rows_in[ty] + CIMG_ROWS_AVERAGED - 1) / CIMG_ROWS_AVERAGED;
    r->row_step[ty] = step;
    r->rows_in[ty] = (r->rows_in[ty] + step - 1) / step;
  }
  return r;
}

int cimg_resampler_wants(const cimg_resampler *r, int y) {
  if (y < 0 || y >= r->source_height) return 0;
  int ty = r->row_of[y];
  return (y - r->row_start[ty]) % r->row_step[ty] == 0;
}

static uint8_t average(uint64_t sum, uint64_t count) {
  return count ? (uint8_t)((sum + count / 2) / count) : 0;
}

// Writes the in-order sums into target row ty of the output and clears them.
static void finish_row(cimg_resampler *r, int ty) {
  uint8_t *out = r->pixels + (size_t)ty * (size_t)r->width * 4;
  for (int tx = 0; tx < r->width; tx++) {
    const uint64_t *sum = r->row_sums + (size_t)tx * 4;
    uint64_t area = (uint64_t)r->columns_in[tx] * (uint64_t)r->rows_in[ty];
    for (int c = 0; c < 3; c++) out[tx * 4 + c] = average(sum[c], sum[3]);
    out[tx * 4 + 3] = average(sum[3], area);
  }
  memset(r->row_sums, 0, (size_t)r->width * 4 * sizeof(uint64_t));
}

void cimg_resampler_add(cimg_resampler *r, int y, int x0, int dx, const uint8_t *rgba,
                        int count) {
  if (r->pixels == NULL || x0 < 0 || dx < 1 || !cimg_resampler_wants(r, y)) return;
  int ty = r->row_of[y];
  if (r->in_order) {
    if (ty < r->current_row) return;
    if (ty > r->current_row) {
      if (r->current_row >= 0) finish_row(r, r->current_row);
      r->current_row = ty;
    }
    for (int i = 0, x = x0; i < count && x < r->source_width; i++, x += dx) {
      const uint8_t *p = rgba + (size_t)i * 4;
      uint64_t *sum = r->row_sums + (size_t)r->column_of[x] * 4;
      sum[0] += (uint64_t)p[0] * p[3];
      sum[1] += (uint64_t)p[1] * p[3];
      sum[2] += (uint64_t)p[2] * p[3];
      sum[3] += p[3];
    }
    return;
  }
  uint32_t *row = r->sums + (size_t)ty * (size_t)r->width * 4;
  for (int i = 0, x = x0; i < count && x < r->source_width; i++, x += dx) {
    const uint8_t *p = rgba + (size_t)i * 4;
    uint32_t *sum = row + (size_t)r->column_of[x] * 4;
    sum[0] += (uint32_t)p[0] * p[3];
    sum[1] += (uint32_t)p[1] * p[3];
    sum[2] += (uint32_t)p[2] * p[3];
    sum[3] += p[3];
  }
}

int cimg_resampler_finish(cimg_resampler *r, cimg_image *out) {
  if (r->pixels == NULL) {
    snprintf(out->error, CIMG_ERROR_LENGTH, "preview already taken");
    return -1;
  }
  if (r->in_order) {
    if (r->current_row >= 0) finish_row(r, r->current_row);
    r->current_row = r->height;  // rows fed from now on are ignored
  } else {
    for (int ty = 0; ty < r->height; ty++) {
      for (int tx = 0; tx < r->width; tx++) {
        size_t at = ((size_t)ty * (size_t)r->width + (size_t)tx) * 4;
        const uint32_t *sum = r->sums + at;
        uint64_t area = (uint64_t)r->columns_in[tx] * (uint64_t)r->rows_in[ty];
        for (int c = 0; c < 3; c++) r->pixels[at + c] = average(sum[c], sum[3]);
        r->pixels[at + 3] = average(sum[3], area);
      }
    }
  }
  out->pixels = r->pixels;
  out->width = r->width;
  out->height = r->height;
  r->pixels = NULL;
  return 0;
}

void cimg_resampler_free(cimg_resampler *r) {
  if (r == NULL) return;
  free(r->column_of);
  free(r->row_of);
  free(r->columns_in);
  free(r->rows_in);
  free(r->row_start);
  free(r->row_step);
  free(r->row_sums);
  free(r->sums);
  free(r->pixels);
  free(r);
}

void cimg_image_free(cimg_image *image) {
  free(image->pixels);
  image->pixels = NULL;
}

void cimg_free(void *memory) { free(memory); }
