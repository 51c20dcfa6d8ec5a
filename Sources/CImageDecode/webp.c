#include "libraries.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

// Data is fed to libwebp's incremental decoder this much at a time, the clock checked between.
#define CIMG_WEBP_STEP (64 * 1024)

static int failure(cimg_image *out, const char *reason) {
  snprintf(out->error, CIMG_ERROR_LENGTH, "%s", reason);
  return -1;
}

static const char *status_text(VP8StatusCode status) {
  switch (status) {
    case VP8_STATUS_OUT_OF_MEMORY: return "out of memory";
    case VP8_STATUS_UNSUPPORTED_FEATURE: return "unsupported feature";
    case VP8_STATUS_NOT_ENOUGH_DATA: return "file ends too early";
    default: return "damaged data";
  }
}

// Decodes one still picture (a whole file, or an animation frame's chunks) shrunk to fit.
static int decode_still(const cimg_webp_functions *lib, const uint8_t *data, size_t size,
                        int max_width, int max_height, const cimg_limits *limits,
                        cimg_budget *budget, cimg_image *out) {
  WebPDecoderConfig config;
  // WebPInitDecoderConfig and WebPGetFeatures are inline wrappers of these, with the ABI
  // version of the headers this was built with.
  if (!lib->WebPInitDecoderConfigInternal(&config, WEBP_DECODER_ABI_VERSION)) {
    return failure(out, "libwebp version mismatch");
  }
  VP8StatusCode status =
      lib->WebPGetFeaturesInternal(data, size, &config.input, WEBP_DECODER_ABI_VERSION);
  if (status != VP8_STATUS_OK) return failure(out, status_text(status));
  int width = config.input.width, height = config.input.height;
  if (cimg_budget_check_size(limits, width, height, "frame", out->error) != 0) return -1;
  // Lossless pictures are decoded whole (4 bytes a pixel), and so is a lossy one's alpha plane
  // (1 byte a pixel), before a row comes out.
  int64_t buffered = (int64_t)width * height * (config.input.format == 2 ? 4 : config.input.has_alpha ? 1 : 0);
  if (limits != NULL && buffered > limits->max_buffered) {
    snprintf(out->error, CIMG_ERROR_LENGTH,
             "needs too much memory to decode (%lld MB for %dx%d; at most %lld MB)",
             (long long)(buffered >> 20), width, height, (long long)(limits->max_buffered >> 20));
    return -1;
  }

  if (max_width > CIMG_MAX_OUTPUT_SIDE) max_width = CIMG_MAX_OUTPUT_SIDE;
  if (max_height > CIMG_MAX_OUTPUT_SIDE) max_height = CIMG_MAX_OUTPUT_SIDE;
  int target_width, target_height;
  cimg_fit(width, height, max_width, max_height, 0, &target_width, &target_height);
  if (target_width != width || target_height != height) {
    config.options.use_scaling = 1;
    config.options.scaled_width = target_width;
    config.options.scaled_height = target_height;
  }
  config.output.colorspace = MODE_RGBA;  // straight alpha
  // libwebp writes straight into the result, so the preview is held once.
  size_t bytes = (size_t)target_width * (size_t)target_height * 4;
  out->pixels = malloc(bytes);
  if (out->pixels == NULL) return failure(out, "out of memory");
  config.output.is_external_memory = 1;
  config.output.u.RGBA.rgba = out->pixels;
  config.output.u.RGBA.stride = target_width * 4;
  config.output.u.RGBA.size = bytes;

  WebPIDecoder *decoder = lib->WebPIDecode(NULL, 0, &config);
  if (decoder == NULL) return failure(out, "out of memory");
  int result = 0;
  status = VP8_STATUS_SUSPENDED;
  for (size_t at = 0; at < size && status == VP8_STATUS_SUSPENDED; at += CIMG_WEBP_STEP) {
    const char *over = cimg_budget_exceeded(budget);
    if (over != NULL) {
      result = failure(out, over);
      break;
    }
    size_t step = size - at < CIMG_WEBP_STEP ? size - at : CIMG_WEBP_STEP;
    status = lib->WebPIAppend(decoder, data + at, step);
  }
  if (result == 0 && status != VP8_STATUS_OK) {
    result = failure(out, status == VP8_STATUS_SUSPENDED ? "file ends too early" : status_text(status));
  }
  if (result == 0) {
    out->width = target_width;
    out->height = target_height;
  }
  lib->WebPIDelete(decoder);
  lib->WebPFreeDecBuffer(&config.output);
  return result;
}

int cimg_decode_webp(const uint8_t *data, size_t size, int max_width, int max_height,
                     const cimg_limits *limits, cimg_image *out) {
  memset(out, 0, sizeof *out);
  const cimg_webp_functions *lib = cimg_webp(out);
  if (lib == NULL) return -1;
  cimg_budget budget;
  cimg_budget_start(&budget, limits);
  WebPBitstreamFeatures features;
  VP8StatusCode status =
      lib->WebPGetFeaturesInternal(data, size, &features, WEBP_DECODER_ABI_VERSION);
  if (status != VP8_STATUS_OK) return failure(out, status_text(status));
  if (cimg_budget_check_size(limits, features.width, features.height, "image", out->error) != 0) {
    return -1;
  }
  int result;
  if (!features.has_animation) {
    result = decode_still(lib, data, size, max_width, max_height, limits, &budget, out);
  } else {
    // Animations preview their first frame, on its own; only they need libwebpdemux.
    const cimg_webpdemux_functions *demuxing = cimg_webpdemux(out);
    if (demuxing == NULL) return -1;
    WebPData whole = {data, size};
    // WebPDemux(&whole), an inline wrapper.
    WebPDemuxer *demux = demuxing->WebPDemuxInternal(&whole, 0, NULL, WEBP_DEMUX_ABI_VERSION);
    WebPIterator frame;
    if (demux == NULL) return failure(out, "damaged animation");
    if (!demuxing->WebPDemuxGetFrame(demux, 1, &frame)) {
      result = failure(out, "animation without frames");
    } else {
      result = decode_still(lib, frame.fragment.bytes, frame.fragment.size, max_width,
                            max_height, limits, &budget, out);
      demuxing->WebPDemuxReleaseIterator(&frame);
    }
    demuxing->WebPDemuxDelete(demux);
  }
  if (result != 0) cimg_image_free(out);
  return result;
}
