#include "libraries.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

// Interlaced rows arrive out of order, so their resampler keeps a sum for every target pixel
// (16 bytes): this side keeps it at 16 MB.
#define CIMG_MAX_INTERLACED_SIDE 1024

// Everything a decode touches after setjmp lives here, on the heap, so its values are still
// defined after a longjmp (locals changed between setjmp and longjmp are not).
struct png_job {
  const cimg_png_functions *lib;
  png_structp png;
  png_infop info;
  const uint8_t *data;
  size_t size, offset;
  cimg_resampler *resampler;
  uint8_t *row;
  char *error;
  const cimg_limits *limits;
  cimg_budget budget;
};

// libpng's callbacks run inside a decode, so libpng is loaded by then.
static void on_error(png_structp png, png_const_charp message) {
  const cimg_png_functions *lib = cimg_png(NULL);
  struct png_job *job = lib->png_get_error_ptr(png);
  snprintf(job->error, CIMG_ERROR_LENGTH, "%s", message);
  lib->png_longjmp(png, 1);
}

// Warnings (bad ancillary chunks and the like) are not the person's business.
static void on_warning(png_structp png, png_const_charp message) {
  (void)png;
  (void)message;
}

static void read_bytes(png_structp png, png_bytep out, size_t count) {
  const cimg_png_functions *lib = cimg_png(NULL);
  struct png_job *job = lib->png_get_io_ptr(png);
  if (count > job->size - job->offset) lib->png_error(png, "file ends too early");
  memcpy(out, job->data + job->offset, count);
  job->offset += count;
}

static int run(struct png_job *job, int max_width, int max_height, cimg_image *out) {
  const cimg_png_functions *lib = job->lib;
  // png_jmpbuf(png), spelled out: the macro calls png_set_longjmp_fn directly.
  if (setjmp(*lib->png_set_longjmp_fn(job->png, longjmp, sizeof(jmp_buf)))) return -1;
  lib->png_set_read_fn(job->png, job, read_bytes);
  if (job->limits) {
    lib->png_set_user_limits(job->png, (png_uint_32)job->limits->max_side,
                             (png_uint_32)job->limits->max_side);
  }
  lib->png_set_chunk_malloc_max(job->png, 8 * 1024 * 1024);
  // Only IHDR, PLTE, tRNS, IDAT and IEND matter for pixels; skipping the rest (text, ICC
  // profiles...) keeps libpng's less travelled chunk parsers out of reach.
  lib->png_set_keep_unknown_chunks(job->png, PNG_HANDLE_CHUNK_NEVER, NULL, -1);
  lib->png_read_info(job->png, job->info);

  png_uint_32 width, height;
  int depth, color_type, interlace;
  lib->png_get_IHDR(job->png, job->info, &width, &height, &depth, &color_type, &interlace, NULL,
                    NULL);
  if (cimg_budget_check_size(job->limits, width, height, "image", job->error) != 0) {
    lib->png_longjmp(job->png, 1);
  }
  lib->png_set_expand(job->png);  // palette and low bit depths to 8-bit, tRNS to alpha
  lib->png_set_strip_16(job->png);
  lib->png_set_gray_to_rgb(job->png);
  lib->png_set_add_alpha(job->png, 0xFF, PNG_FILLER_AFTER);
  lib->png_read_update_info(job->png, job->info);
  if (lib->png_get_rowbytes(job->png, job->info) != (size_t)width * 4) {
    lib->png_error(job->png, "unexpected pixel layout");
  }

  int interlaced = interlace == PNG_INTERLACE_ADAM7;
  int largest = interlaced ? CIMG_MAX_INTERLACED_SIDE : CIMG_MAX_OUTPUT_SIDE;
  int target_width, target_height;
  cimg_fit((int)width, (int)height, max_width < largest ? max_width : largest,
           max_height < largest ? max_height : largest, 0, &target_width, &target_height);
  job->resampler =
      cimg_resampler_create((int)width, (int)height, target_width, target_height, !interlaced);
  job->row = malloc((size_t)width * 4);
  if (job->resampler == NULL || job->row == NULL) lib->png_error(job->png, "out of memory");

  // Interlaced images are read one reduced pass image at a time (no interlace handling), so
  // no full-size buffer is needed: each pass's pixels go straight to their place.
  for (int pass = 0; pass < (interlaced ? 7 : 1); pass++) {
    png_uint_32 rows = interlaced ? PNG_PASS_ROWS(height, pass) : height;
    png_uint_32 columns = interlaced ? PNG_PASS_COLS(width, pass) : width;
    if (rows == 0 || columns == 0) continue;  // libpng skips empty passes too
    int x0 = interlaced ? PNG_PASS_START_COL(pass) : 0;
    int dx = interlaced ? 1 << PNG_PASS_COL_SHIFT(pass) : 1;
    for (png_uint_32 r = 0; r < rows; r++) {
      const char *over = cimg_budget_exceeded(&job->budget);
      if (over != NULL) lib->png_error(job->png, over);
      lib->png_read_row(job->png, job->row, NULL);
      int y = (int)(interlaced ? PNG_ROW_FROM_PASS_ROW(r, pass) : r);
      cimg_resampler_add(job->resampler, y, x0, dx, job->row, (int)columns);
    }
  }
  return cimg_resampler_finish(job->resampler, out);
}

int cimg_decode_png(const uint8_t *data, size_t size, int max_width, int max_height,
                    const cimg_limits *limits, cimg_image *out) {
  memset(out, 0, sizeof *out);
  const cimg_png_functions *lib = cimg_png(out);
  if (lib == NULL) return -1;
  struct png_job *job = calloc(1, sizeof *job);
  if (job == NULL) {
    snprintf(out->error, CIMG_ERROR_LENGTH, "out of memory");
    return -1;
  }
  job->lib = lib;
  job->data = data;
  job->size = size;
  job->error = out->error;
  job->limits = limits;
  cimg_budget_start(&job->budget, limits);
  job->png = lib->png_create_read_struct(PNG_LIBPNG_VER_STRING, job, on_error, on_warning);
  job->info = job->png ? lib->png_create_info_struct(job->png) : NULL;
  int status = -1;
  if (job->info == NULL) {
    snprintf(out->error, CIMG_ERROR_LENGTH, "out of memory");
  } else {
    status = run(job, max_width, max_height, out);
  }
  lib->png_destroy_read_struct(job->png ? &job->png : NULL, job->info ? &job->info : NULL, NULL);
  cimg_resampler_free(job->resampler);
  free(job->row);
  free(job);
  if (status != 0) cimg_image_free(out);
  return status;
}

int cimg_encode_png(const uint8_t *rgba, int width, int height, uint8_t **out, size_t *out_size) {
  *out = NULL;
  *out_size = 0;
  const cimg_png_functions *lib = cimg_png(NULL);
  if (lib == NULL) return -1;
  png_image image;
  memset(&image, 0, sizeof image);
  image.version = PNG_IMAGE_VERSION;
  image.width = (png_uint_32)width;
  image.height = (png_uint_32)height;
  image.format = PNG_FORMAT_RGBA;
  png_alloc_size_t size = 0;
  *out = NULL;
  // The first call measures, the second writes.
  if (lib->png_image_write_to_memory(&image, NULL, &size, 0, rgba, 0, NULL) && size > 0) {
    *out = malloc(size);
    if (*out && !lib->png_image_write_to_memory(&image, *out, &size, 0, rgba, 0, NULL)) {
      free(*out);
      *out = NULL;
    }
  }
  lib->png_image_free(&image);
  *out_size = *out ? size : 0;
  return *out ? 0 : -1;
}
