// Decoding shim for the image preview: libpng and libjpeg report errors by longjmp, which must
// never cross Swift frames, so every call into them happens here, behind setjmp. giflib and
// libwebp are driven from here too, so all four decoders share one set of budgets. None of these
// libraries is linked: each is opened with dlopen the first time a picture needs it.
#ifndef CIMAGEDECODE_H
#define CIMAGEDECODE_H

#include <stddef.h>
#include <stdint.h>

#define CIMG_ERROR_LENGTH 200
/// No decode produces more than this many pixels a side (the preview's own size, not the
/// picture's): it bounds the output buffer at 10 MB.
#define CIMG_MAX_OUTPUT_SIDE 1600

/// What one decode may cost. A decoder checks the header against these before decoding and the
/// clock and the interrupt flag while it runs.
typedef struct {
  /// Pixels of the canvas and of any frame; larger sides than max_side are refused too.
  int64_t max_pixels;
  int max_side;
  /// JPEG scans.
  int max_scans;
  /// Bytes a decoder may hold for the whole picture (progressive JPEG coefficients, lossless
  /// WebP pixels); rows and the preview come on top.
  int64_t max_buffered;
  /// CPU seconds for the whole decode.
  double max_seconds;
  /// Polled while decoding when non-NULL: a non-zero answer (Ctrl-C was pressed) stops it.
  int (*interrupted)(void);
} cimg_limits;

/// The shared libraries the decoders open on first use (Debian 12's sonames).
typedef enum {
  CIMG_LIBRARY_NONE = 0,
  CIMG_LIBRARY_PNG,        // libpng16.so.16
  CIMG_LIBRARY_JPEG,       // libjpeg.so.62
  CIMG_LIBRARY_GIF,        // libgif.so.7
  CIMG_LIBRARY_WEBP,       // libwebp.so.7
  CIMG_LIBRARY_WEBPDEMUX,  // libwebpdemux.so.2 (animated WebP)
} cimg_library;

/// The library's soname ("libwebp.so.7") and the Debian package that installs it ("libwebp7").
const char *cimg_library_soname(cimg_library library);
const char *cimg_library_package(cimg_library library);
/// Opens the library and resolves the functions the decoders call, once per process (the first
/// caller does it, concurrent callers wait for it; later calls give the same answer without
/// looking again). Return 0, or -1 with why (dlopen's reason, or the first function missing) in
/// reason.
int cimg_library_load(cimg_library library, char *reason, size_t size);
/// For tests: opens soname as if it were the library and resolves the same functions, then
/// closes it; what the decoders use is not touched. Return 0, or -1 with why in reason.
int cimg_library_probe(cimg_library library, const char *soname, char *reason, size_t size);

/// A decoded picture: 8-bit RGBA with straight alpha, rows top to bottom.
typedef struct {
  int width;
  int height;
  /// width * height * 4 bytes, owned by the image: release with cimg_image_free.
  uint8_t *pixels;
  /// Why a call failed, one line.
  char error[CIMG_ERROR_LENGTH];
  /// When the call failed because a library could not be loaded: which (error says why).
  cimg_library missing_library;
} cimg_image;

/// The size to draw a width x height picture within max_width x max_height keeping its shape,
/// at least 1 x 1. Never larger than the picture unless enlarge is non-zero.
void cimg_fit(int width, int height, int max_width, int max_height, int enlarge,
              int *out_width, int *out_height);

/// Decode a PNG, JPEG, GIF (first frame) or WebP (first frame), shrunk while decoding to fit
/// max_width x max_height (never enlarged, never over CIMG_MAX_OUTPUT_SIDE). Return 0 with
/// out->pixels set, or -1 with out->error set. Never print, never abort.
int cimg_decode_png(const uint8_t *data, size_t size, int max_width, int max_height,
                    const cimg_limits *limits, cimg_image *out);
int cimg_decode_jpeg(const uint8_t *data, size_t size, int max_width, int max_height,
                     const cimg_limits *limits, cimg_image *out);
int cimg_decode_gif(const uint8_t *data, size_t size, int max_width, int max_height,
                    const cimg_limits *limits, cimg_image *out);
int cimg_decode_webp(const uint8_t *data, size_t size, int max_width, int max_height,
                     const cimg_limits *limits, cimg_image *out);
void cimg_image_free(cimg_image *image);

/// Encode RGBA pixels as a PNG in memory, for terminals that take image files. Return 0 with
/// *out (free with cimg_free) and *out_size set, or -1 (libpng not loaded: see
/// cimg_library_load).
int cimg_encode_png(const uint8_t *rgba, int width, int height, uint8_t **out, size_t *out_size);
void cimg_free(void *memory);

/// An area-averaging (box filter) shrinker fed one row at a time, so a large picture is never
/// held whole. Pixels never fed count as transparent. Rows fed in order (rows_in_order) cost 32
/// bytes per target column plus the output; rows in any order (interlaced pictures) cost 16
/// bytes per target pixel, so callers keep those targets small.
typedef struct cimg_resampler cimg_resampler;

/// NULL when out of memory, when the target is larger than the source or larger than
/// CIMG_MAX_OUTPUT_SIDE.
cimg_resampler *cimg_resampler_create(int source_width, int source_height, int width, int height,
                                      int rows_in_order);
/// Add count RGBA pixels of source row y, at columns x0, x0 + dx, x0 + 2 dx... In order mode,
/// a row above the last one fed is ignored.
void cimg_resampler_add(cimg_resampler *resampler, int y, int x0, int dx, const uint8_t *rgba,
                        int count);
/// Whether source row y is used (a target row averages at most 4 evenly spaced source rows):
/// a decoder may skip converting the others, though it must still read them.
int cimg_resampler_wants(const cimg_resampler *resampler, int y);
/// Write the shrunk picture into out (which takes ownership of the pixels; the resampler can
/// only finish once). Return 0, or -1 with out->error set.
int cimg_resampler_finish(cimg_resampler *resampler, cimg_image *out);
void cimg_resampler_free(cimg_resampler *resampler);

/// The CPU clock and interrupt flag a decode runs under. cimg_budget_exceeded returns a reason
/// ("took more than 2 s of CPU time", "interrupted") or NULL while within budget.
typedef struct {
  const cimg_limits *limits;
  double start;
} cimg_budget;
void cimg_budget_start(cimg_budget *budget, const cimg_limits *limits);
const char *cimg_budget_exceeded(const cimg_budget *budget);
/// -1 with error set ("frame 1 too large (65535x65535 pixels...)") when width x height is over
/// the pixel budget; what names the part ("image", "frame 1"). 0 otherwise.
int cimg_budget_check_size(const cimg_limits *limits, int64_t width, int64_t height,
                           const char *what, char *error);

#endif
