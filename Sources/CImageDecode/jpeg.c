#include "libraries.h"

#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

// libjpeg's own allocations besides the whole-image coefficient buffer: rows, tables.
#define CIMG_WORKING_MEMORY (8L * 1024 * 1024)

// Heap-allocated so its fields keep their values across the longjmp (see png.c).
struct jpeg_job {
  const cimg_jpeg_functions *lib;
  struct jpeg_decompress_struct cinfo;
  struct jpeg_error_mgr errors;
  struct jpeg_progress_mgr progress;
  jmp_buf jump;
  cimg_resampler *resampler;
  uint8_t *row, *rgba;
  char *error;
  const cimg_limits *limits;
  cimg_budget budget;
};

_Static_assert(CIMG_ERROR_LENGTH >= JMSG_LENGTH_MAX, "format_message writes JMSG_LENGTH_MAX");

static void on_error(j_common_ptr cinfo) {
  struct jpeg_job *job = cinfo->client_data;
  (*cinfo->err->format_message)(cinfo, job->error);
  longjmp(job->jump, 1);
}

// libjpeg prints warnings ("Corrupt JPEG data: ...") to stderr by default. A baseline file
// with damaged data still shows what decodes; in a progressive file a warning (a bogus
// progression, scans that do not add up) is how a scan bomb looks, so it is an error there.
static void on_emit(j_common_ptr cinfo, int level) {
  struct jpeg_job *job = cinfo->client_data;
  if (level < 0 && job->cinfo.progressive_mode) {
    (*cinfo->err->format_message)(cinfo, job->error);
    longjmp(job->jump, 1);
  }
}

static void fail(struct jpeg_job *job, const char *reason) {
  snprintf(job->error, CIMG_ERROR_LENGTH, "%s", reason);
  longjmp(job->jump, 1);
}

static void on_progress(j_common_ptr cinfo) {
  struct jpeg_job *job = cinfo->client_data;
  if (job->limits && job->cinfo.input_scan_number > job->limits->max_scans) {
    snprintf(job->error, CIMG_ERROR_LENGTH, "too many scans (more than %d)",
             job->limits->max_scans);
    longjmp(job->jump, 1);
  }
  const char *over = cimg_budget_exceeded(&job->budget);
  if (over != NULL) fail(job, over);
}

// Adobe writes CMYK inverted (0 is full ink); plain CMYK files use 0 for no ink.
static void cmyk_to_rgba(const uint8_t *cmyk, uint8_t *rgba, int count, int inverted) {
  for (int i = 0; i < count; i++, cmyk += 4, rgba += 4) {
    int k = inverted ? cmyk[3] : 255 - cmyk[3];
    for (int c = 0; c < 3; c++) {
      int ink = inverted ? cmyk[c] : 255 - cmyk[c];
      rgba[c] = (uint8_t)((ink * k + 127) / 255);
    }
    rgba[3] = 255;
  }
}

static int run(struct jpeg_job *job, const uint8_t *data, size_t size, int max_width,
               int max_height, cimg_image *out) {
  const cimg_jpeg_functions *lib = job->lib;
  struct jpeg_decompress_struct *cinfo = &job->cinfo;
  if (setjmp(job->jump)) return -1;
  // jpeg_create_decompress(cinfo), spelled out: the macro calls jpeg_CreateDecompress directly.
  // It keeps err and client_data, and clears the rest.
  lib->jpeg_CreateDecompress(cinfo, JPEG_LIB_VERSION, sizeof(struct jpeg_decompress_struct));
  // Past this libjpeg would need a backing store, which it does not have: an error.
  if (job->limits) cinfo->mem->max_memory_to_use = job->limits->max_buffered + CIMG_WORKING_MEMORY;
  cinfo->progress = &job->progress;
  lib->jpeg_mem_src(cinfo, data, (unsigned long)size);
  lib->jpeg_read_header(cinfo, TRUE);
  if (cimg_budget_check_size(job->limits, cinfo->image_width, cinfo->image_height, "image",
                             job->error) != 0) {
    longjmp(job->jump, 1);
  }

  int cmyk = cinfo->jpeg_color_space == JCS_CMYK || cinfo->jpeg_color_space == JCS_YCCK;
  cinfo->out_color_space = cmyk ? JCS_CMYK : JCS_EXT_RGBA;
  // Let the IDCT do most of the shrinking (N/8 for N = 1...8): the smallest scale that still
  // leaves at least the target size, which the box filter then reaches exactly.
  int target_width, target_height;
  if (max_width > CIMG_MAX_OUTPUT_SIDE) max_width = CIMG_MAX_OUTPUT_SIDE;
  if (max_height > CIMG_MAX_OUTPUT_SIDE) max_height = CIMG_MAX_OUTPUT_SIDE;
  cimg_fit((int)cinfo->image_width, (int)cinfo->image_height, max_width, max_height, 0,
           &target_width, &target_height);
  cinfo->scale_denom = 8;
  for (cinfo->scale_num = 1; cinfo->scale_num < 8; cinfo->scale_num++) {
    if ((cinfo->image_width * cinfo->scale_num + 7) / 8 >= (unsigned)target_width &&
        (cinfo->image_height * cinfo->scale_num + 7) / 8 >= (unsigned)target_height) {
      break;
    }
  }
  lib->jpeg_start_decompress(cinfo);

  int width = (int)cinfo->output_width, height = (int)cinfo->output_height;
  if (target_width > width) target_width = width;
  if (target_height > height) target_height = height;
  job->resampler = cimg_resampler_create(width, height, target_width, target_height, 1);
  job->row = malloc((size_t)width * (size_t)cinfo->output_components);
  job->rgba = cmyk ? malloc((size_t)width * 4) : job->row;
  if (job->resampler == NULL || job->row == NULL || job->rgba == NULL) {
    snprintf(job->error, CIMG_ERROR_LENGTH, "out of memory");
    return -1;
  }
  while (cinfo->output_scanline < cinfo->output_height) {
    JSAMPROW rows[1] = {job->row};
    int y = (int)cinfo->output_scanline;
    const char *over = cimg_budget_exceeded(&job->budget);
    if (over != NULL) fail(job, over);
    if (lib->jpeg_read_scanlines(cinfo, rows, 1) != 1) break;
    if (!cimg_resampler_wants(job->resampler, y)) continue;
    if (cmyk) cmyk_to_rgba(job->row, job->rgba, width, cinfo->saw_Adobe_marker);
    cimg_resampler_add(job->resampler, y, 0, 1, job->rgba, width);
  }
  lib->jpeg_finish_decompress(cinfo);
  return cimg_resampler_finish(job->resampler, out);
}

int cimg_decode_jpeg(const uint8_t *data, size_t size, int max_width, int max_height,
                     const cimg_limits *limits, cimg_image *out) {
  memset(out, 0, sizeof *out);
  const cimg_jpeg_functions *lib = cimg_jpeg(out);
  if (lib == NULL) return -1;
  struct jpeg_job *job = calloc(1, sizeof *job);
  if (job == NULL) {
    snprintf(out->error, CIMG_ERROR_LENGTH, "out of memory");
    return -1;
  }
  job->lib = lib;
  job->error = out->error;
  job->limits = limits;
  cimg_budget_start(&job->budget, limits);
  job->cinfo.client_data = job;
  job->cinfo.err = lib->jpeg_std_error(&job->errors);
  job->errors.error_exit = on_error;
  job->errors.emit_message = on_emit;
  job->progress.progress_monitor = on_progress;
  int status = run(job, data, size, max_width, max_height, out);
  lib->jpeg_destroy_decompress(&job->cinfo);
  cimg_resampler_free(job->resampler);
  if (job->rgba != job->row) free(job->rgba);
  free(job->row);
  free(job);
  if (status != 0) cimg_image_free(out);
  return status;
}
