#include "CImageDecode.h"

#include <stdio.h>
#include <time.h>

// Thread CPU time: what this decode costs, whatever else the machine is doing.
static double cpu_seconds(void) {
  struct timespec now;
  if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now) != 0) return 0;
  return (double)now.tv_sec + (double)now.tv_nsec / 1e9;
}

void cimg_budget_start(cimg_budget *budget, const cimg_limits *limits) {
  budget->limits = limits;
  budget->start = cpu_seconds();
}

const char *cimg_budget_exceeded(const cimg_budget *budget) {
  const cimg_limits *limits = budget->limits;
  if (limits == NULL) return NULL;
  if (limits->interrupted != NULL && limits->interrupted()) return "interrupted";
  if (limits->max_seconds > 0 && cpu_seconds() - budget->start > limits->max_seconds) {
    return "took too long to decode (over the CPU time budget)";
  }
  return NULL;
}

int cimg_budget_check_size(const cimg_limits *limits, int64_t width, int64_t height,
                           const char *what, char *error) {
  if (limits == NULL) return 0;
  if (width > limits->max_side || height > limits->max_side ||
      width * height > limits->max_pixels) {
    snprintf(error, CIMG_ERROR_LENGTH,
             "%s too large (%lldx%lld pixels; at most %d a side and %lld megapixels)", what,
             (long long)width, (long long)height, limits->max_side,
             (long long)(limits->max_pixels / 1000000));
    return -1;
  }
  return 0;
}
