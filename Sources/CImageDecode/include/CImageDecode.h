// Decoding shim for the image preview: libpng and libjpeg report errors by longjmp, which must
// never cross Swift frames, so every call into them happens here, behind setjmp.
#ifndef CIMAGEDECODE_H
#define CIMAGEDECODE_H

#include <stddef.h>
#include <stdint.h>

#define CIMG_ERROR_LENGTH 200

/// A decoded picture: 8-bit RGBA with straight alpha, rows top to bottom.
typedef struct {
  int width;
  int height;
  /// width * height * 4 bytes, owned by the image: release with cimg_image_free.
  uint8_t *pixels;
  /// Why a call failed, one line.
  char error[CIMG_ERROR_LENGTH];
} cimg_image;

/// The size to draw a width x height picture within max_width x max_height keeping its shape,
/// at least 1 x 1. Never larger than the picture unless enlarge is non-zero.
void cimg_fit(int width, int height, int max_width, int max_height, int enlarge,
              int *out_width, int *out_height);

/// Decode a PNG or JPEG, shrunk while decoding to fit max_width x max_height (never enlarged).
/// Return 0 with out->pixels set, or -1 with out->error set. Never print, never abort.
int cimg_decode_png(const uint8_t *data, size_t size, int max_width, int max_height,
                    cimg_image *out);
int cimg_decode_jpeg(const uint8_t *data, size_t size, int max_width, int max_height,
                     cimg_image *out);
void cimg_image_free(cimg_image *image);

/// Encode RGBA pixels as a PNG in memory, for terminals that take image files. Return 0 with
/// *out (free with cimg_free) and *out_size set, or -1.
int cimg_encode_png(const uint8_t *rgba, int width, int height, uint8_t **out, size_t *out_size);
void cimg_free(void *memory);

/// An area-averaging (box filter) shrinker fed one row at a time, so a large picture is never
/// held whole. Pixels never fed count as transparent.
typedef struct cimg_resampler cimg_resampler;

/// NULL when out of memory or when the target is larger than the source.
cimg_resampler *cimg_resampler_create(int source_width, int source_height, int width,
                                      int height);
/// Add count RGBA pixels of source row y, at columns x0, x0 + dx, x0 + 2 dx...
void cimg_resampler_add(cimg_resampler *resampler, int y, int x0, int dx, const uint8_t *rgba,
                        int count);
/// Write the shrunk picture into out. Return 0, or -1 with out->error set.
int cimg_resampler_finish(const cimg_resampler *resampler, cimg_image *out);
void cimg_resampler_free(cimg_resampler *resampler);

#endif
