// The image libraries' declarations, for their types only: CImageDecode does not link libpng,
// libjpeg, giflib or libwebp. They are opened with dlopen, by soname, the first time a picture
// of their format is decoded, so a command that shows no image maps none of them, and Debian's
// security updates of these hostile-input parsers apply without rebuilding forum.
#ifndef CIMAGEDECODE_LIBRARIES_H
#define CIMAGEDECODE_LIBRARIES_H

#include "CImageDecode.h"

#include <gif_lib.h>
#include <png.h>
#include <stdio.h>
#include <webp/decode.h>
#include <webp/demux.h>
// After stdio.h: jpeglib.h needs FILE and size_t.
#include <jpeglib.h>

// Every function each decoder calls, exactly as `nm -u` lists them: macros and inline wrappers
// resolved (png_jmpbuf is png_set_longjmp_fn, jpeg_create_decompress is jpeg_CreateDecompress,
// WebPGetFeatures, WebPInitDecoderConfig and WebPDemux call the *Internal functions with the
// ABI version of these headers). Each field has the type of the function it is named after.
#define CIMG_PNG_FUNCTIONS(X)                                                                  \
  X(png_create_read_struct)                                                                    \
  X(png_create_info_struct)                                                                    \
  X(png_destroy_read_struct)                                                                   \
  X(png_set_longjmp_fn)                                                                        \
  X(png_longjmp)                                                                               \
  X(png_error)                                                                                 \
  X(png_get_error_ptr)                                                                         \
  X(png_get_io_ptr)                                                                            \
  X(png_set_read_fn)                                                                           \
  X(png_set_user_limits)                                                                       \
  X(png_set_chunk_malloc_max)                                                                  \
  X(png_set_keep_unknown_chunks)                                                               \
  X(png_read_info)                                                                             \
  X(png_get_IHDR)                                                                              \
  X(png_set_expand)                                                                            \
  X(png_set_strip_16)                                                                          \
  X(png_set_gray_to_rgb)                                                                       \
  X(png_set_add_alpha)                                                                         \
  X(png_read_update_info)                                                                      \
  X(png_get_rowbytes)                                                                          \
  X(png_read_row)                                                                              \
  X(png_image_write_to_memory)                                                                 \
  X(png_image_free)

#define CIMG_JPEG_FUNCTIONS(X)                                                                 \
  X(jpeg_std_error)                                                                            \
  X(jpeg_CreateDecompress)                                                                     \
  X(jpeg_destroy_decompress)                                                                   \
  X(jpeg_mem_src)                                                                              \
  X(jpeg_read_header)                                                                          \
  X(jpeg_start_decompress)                                                                     \
  X(jpeg_read_scanlines)                                                                       \
  X(jpeg_finish_decompress)

#define CIMG_GIF_FUNCTIONS(X)                                                                  \
  X(DGifOpen)                                                                                  \
  X(DGifCloseFile)                                                                             \
  X(DGifGetRecordType)                                                                         \
  X(DGifGetExtension)                                                                          \
  X(DGifGetExtensionNext)                                                                      \
  X(DGifGetImageDesc)                                                                          \
  X(DGifGetLine)                                                                               \
  X(GifErrorString)

#define CIMG_WEBP_FUNCTIONS(X)                                                                 \
  X(WebPGetFeaturesInternal)                                                                   \
  X(WebPInitDecoderConfigInternal)                                                             \
  X(WebPIDecode)                                                                               \
  X(WebPIAppend)                                                                               \
  X(WebPIDelete)                                                                               \
  X(WebPFreeDecBuffer)

#define CIMG_WEBPDEMUX_FUNCTIONS(X)                                                            \
  X(WebPDemuxInternal)                                                                         \
  X(WebPDemuxGetFrame)                                                                         \
  X(WebPDemuxReleaseIterator)                                                                  \
  X(WebPDemuxDelete)

#define CIMG_LIBRARY_FIELD(name) __typeof__(name) *name;

typedef struct {
  CIMG_PNG_FUNCTIONS(CIMG_LIBRARY_FIELD)
} cimg_png_functions;
typedef struct {
  CIMG_JPEG_FUNCTIONS(CIMG_LIBRARY_FIELD)
} cimg_jpeg_functions;
typedef struct {
  CIMG_GIF_FUNCTIONS(CIMG_LIBRARY_FIELD)
} cimg_gif_functions;
typedef struct {
  CIMG_WEBP_FUNCTIONS(CIMG_LIBRARY_FIELD)
} cimg_webp_functions;
typedef struct {
  CIMG_WEBPDEMUX_FUNCTIONS(CIMG_LIBRARY_FIELD)
} cimg_webpdemux_functions;

#undef CIMG_LIBRARY_FIELD

/// The library's table of functions, loaded on the first call (once per process, whichever
/// thread asks first); the same answer after. NULL when it cannot be loaded: then out->error
/// says why and out->missing_library names it (when out is not NULL), so the decode can return
/// -1 at once. Callbacks of a running decode pass NULL: their library is loaded.
const cimg_png_functions *cimg_png(cimg_image *out);
const cimg_jpeg_functions *cimg_jpeg(cimg_image *out);
const cimg_gif_functions *cimg_gif(cimg_image *out);
const cimg_webp_functions *cimg_webp(cimg_image *out);
const cimg_webpdemux_functions *cimg_webpdemux(cimg_image *out);

#endif
