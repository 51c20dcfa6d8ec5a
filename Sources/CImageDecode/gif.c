#include "libraries.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

// Interlaced rows arrive out of order (see png.c).
#define CIMG_MAX_INTERLACED_SIDE 1024

struct gif_source {
  const uint8_t *data;
  size_t size, offset;
};

static int read_bytes(GifFileType *gif, GifByteType *out, int count) {
  struct gif_source *source = gif->UserData;
  size_t left = source->size - source->offset;
  size_t n = count < 0 ? 0 : (size_t)count < left ? (size_t)count : left;
  memcpy(out, source->data + source->offset, n);
  source->offset += n;
  return (int)n;
}

static int failure(cimg_image *out, const char *reason) {
  snprintf(out->error, CIMG_ERROR_LENGTH, "%s", reason);
  return -1;
}

static int gif_failure(const cimg_gif_functions *lib, cimg_image *out, int code) {
  const char *text = lib->GifErrorString(code);
  return failure(out, text ? text : "unreadable GIF");
}

// Which row of the frame the index-th decoded row is: interlaced GIFs send every 8th row first,
// then fill in.
static int interlaced_row(int index, int height) {
  static const int starts[] = {0, 4, 2, 1}, steps[] = {8, 8, 4, 2};
  for (int pass = 0; pass < 4; pass++) {
    int rows = height > starts[pass] ? (height - starts[pass] + steps[pass] - 1) / steps[pass] : 0;
    if (index < rows) return starts[pass] + index * steps[pass];
    index -= rows;
  }
  return height;
}

// Reads the first frame into the resampler; damaged data ends it early, leaving the rest
// transparent, the way browsers show such files.
static int first_frame(const cimg_gif_functions *lib, GifFileType *gif, int max_width,
                       int max_height, const cimg_limits *limits, cimg_image *out) {
  cimg_budget budget;
  cimg_budget_start(&budget, limits);
  int transparent = -1;
  GifRecordType record;
  for (;;) {
    if (lib->DGifGetRecordType(gif, &record) != GIF_OK) return gif_failure(lib, out, gif->Error);
    if (record == TERMINATE_RECORD_TYPE) return failure(out, "no image data");
    if (record == EXTENSION_RECORD_TYPE) {
      int code;
      GifByteType *block;
      if (lib->DGifGetExtension(gif, &code, &block) != GIF_OK) {
        return gif_failure(lib, out, gif->Error);
      }
      if (code == GRAPHICS_EXT_FUNC_CODE && block != NULL && block[0] >= 4) {
        transparent = (block[1] & 1) ? block[4] : -1;
      }
      while (block != NULL) {
        if (lib->DGifGetExtensionNext(gif, &block) != GIF_OK) {
          return gif_failure(lib, out, gif->Error);
        }
      }
      continue;
    }
    if (record == IMAGE_DESC_RECORD_TYPE) break;
  }
  if (lib->DGifGetImageDesc(gif) != GIF_OK) return gif_failure(lib, out, gif->Error);

  GifImageDesc frame = gif->Image;
  int canvas_width = gif->SWidth, canvas_height = gif->SHeight;
  // Some encoders leave the logical screen at 0x0; the first frame gives the size then.
  if (canvas_width == 0 || canvas_height == 0) {
    canvas_width = frame.Width;
    canvas_height = frame.Height;
  }
  if (canvas_width < 1 || canvas_height < 1) return failure(out, "empty picture");
  if (cimg_budget_check_size(limits, canvas_width, canvas_height, "image", out->error) != 0 ||
      cimg_budget_check_size(limits, frame.Width, frame.Height, "frame 1", out->error) != 0) {
    return -1;
  }

  int interlaced = frame.Interlace != 0;
  int largest = interlaced ? CIMG_MAX_INTERLACED_SIDE : CIMG_MAX_OUTPUT_SIDE;
  int target_width, target_height;
  cimg_fit(canvas_width, canvas_height, max_width < largest ? max_width : largest,
           max_height < largest ? max_height : largest, 0, &target_width, &target_height);
  cimg_resampler *resampler =
      cimg_resampler_create(canvas_width, canvas_height, target_width, target_height, !interlaced);
  GifPixelType *indices = malloc(frame.Width > 0 ? (size_t)frame.Width : 1);
  uint8_t *rgba = malloc(frame.Width > 0 ? (size_t)frame.Width * 4 : 4);
  int status = 0;
  if (resampler == NULL || indices == NULL || rgba == NULL) {
    status = failure(out, "out of memory");
    goto done;
  }

  const ColorMapObject *map = frame.ColorMap ? frame.ColorMap : gif->SColorMap;
  int visible = canvas_width - frame.Left < frame.Width ? canvas_width - frame.Left : frame.Width;
  for (int row = 0; row < frame.Height; row++) {
    const char *over = cimg_budget_exceeded(&budget);
    if (over != NULL) {
      status = failure(out, over);
      goto done;
    }
    if (lib->DGifGetLine(gif, indices, frame.Width) != GIF_OK) break;
    int y = interlaced ? interlaced_row(row, frame.Height) : row;
    if (visible > 0 && frame.Top + y < canvas_height &&
        cimg_resampler_wants(resampler, frame.Top + y)) {
      for (int x = 0; x < visible; x++) {
        uint8_t *p = rgba + (size_t)x * 4;
        int index = indices[x];
        if (index == transparent) {
          memset(p, 0, 4);
        } else if (map != NULL && index < map->ColorCount) {
          p[0] = map->Colors[index].Red;
          p[1] = map->Colors[index].Green;
          p[2] = map->Colors[index].Blue;
          p[3] = 255;
        } else {
          p[0] = p[1] = p[2] = 0;
          p[3] = 255;
        }
      }
      cimg_resampler_add(resampler, frame.Top + y, frame.Left, 1, rgba, visible);
    }
  }
  status = cimg_resampler_finish(resampler, out);
done:
  free(indices);
  free(rgba);
  cimg_resampler_free(resampler);
  return status;
}

int cimg_decode_gif(const uint8_t *data, size_t size, int max_width, int max_height,
                    const cimg_limits *limits, cimg_image *out) {
  memset(out, 0, sizeof *out);
  const cimg_gif_functions *lib = cimg_gif(out);
  if (lib == NULL) return -1;
  struct gif_source source = {data, size, 0};
  int error = 0;
  GifFileType *gif = lib->DGifOpen(&source, read_bytes, &error);
  if (gif == NULL) return gif_failure(lib, out, error);
  int status = first_frame(lib, gif, max_width, max_height, limits, out);
  lib->DGifCloseFile(gif, &error);
  if (status != 0) cimg_image_free(out);
  return status;
}
