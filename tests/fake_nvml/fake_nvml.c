/* A fake NVML (libfake-nvml.so) for tests without a GPU (TEL-1). It exports exactly the twelve entry points kubex
 * resolves and nothing else (every other symbol is hidden), with NVML's C ABI, so the exporter loads it through the
 * same dlopen as the real libnvidia-ml.so.1.
 *
 * The node it pretends to be comes from the scenario file named by $FAKE_NVML_SCENARIO, read at nvmlInit_v2 and
 * read again by any later call once the file's mtime, size or inode changed (a test may rewrite or rename a new
 * file over it while the exporter runs; an unreadable or malformed new version keeps the previous one and says why
 * on stderr). One directive a line; '#' starts a comment; fields are separated by blanks:
 *
 *   driver 550.54.15                                  nvmlSystemGetDriverVersion (default "0.0.0-fake")
 *   device <i> <uuid> "<name>" total=<bytes> [used=<bytes>]
 *                                                     device <i> (0..63, any order; the count is the highest i + 1);
 *                                                     used= defaults to the sum of its processes' known memory
 *   process <i> pid=<pid> used=<bytes|na>             a compute process on device i (na: NVML_VALUE_NOT_AVAILABLE)
 *   util <i> pid=<pid> sm=<pct> [mem=<pct>] [ts=<us>] a process utilization sample on device i; its timeStamp is
 *                                                     ts= or else the time of the read (CLOCK_REALTIME, us)
 *   devutil <i> gpu=<pct> mem=<pct>                   nvmlDeviceGetUtilizationRates of device i (default 0 0)
 *   error <call> [<i>] <CODE>                         the entry point <call> (e.g. nvmlDeviceGetMemoryInfo) returns
 *                                                     CODE, for device i or for every device / a call without one
 *   init-error <CODE>                                 nvmlInit_v2 returns CODE
 *
 * CODE is an NVML_ERROR_ name without the prefix (GPU_IS_LOST, NOT_FOUND, DRIVER_NOT_LOADED, ...) or a number.
 * nvmlDeviceGetProcessUtilization returns only samples newer than lastSeenTimeStamp, and NVML_ERROR_NOT_FOUND when
 * none is; with a NULL buffer it answers NVML_ERROR_INSUFFICIENT_SIZE and the count, as NVML does.
 * Without $FAKE_NVML_SCENARIO, or when the file cannot be read at nvmlInit_v2, nvmlInit_v2 fails with
 * NVML_ERROR_DRIVER_NOT_LOADED; a malformed file with NVML_ERROR_UNKNOWN (and "fake-nvml: <file>:<line>: ..." on
 * stderr). */
#define _POSIX_C_SOURCE 200809L
#include <ctype.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#define EXPORT __attribute__((visibility("default")))

typedef int nvmlReturn_t;
typedef struct nvmlDevice_st* nvmlDevice_t;
typedef struct {
  unsigned long long total, free, used;
} nvmlMemory_t;
typedef struct {
  unsigned int pid;
  unsigned long long usedGpuMemory;
  unsigned int gpuInstanceId, computeInstanceId;
} nvmlProcessInfo_t;
typedef struct {
  unsigned int pid;
  unsigned long long timeStamp;
  unsigned int smUtil, memUtil, encUtil, decUtil;
} nvmlProcessUtilizationSample_t;
typedef struct {
  unsigned int gpu, memory;
} nvmlUtilization_t;

#define NVML_VALUE_NOT_AVAILABLE (~0ULL)
#define MAX_DEVICES 64
#define ANY_DEVICE (-1)

static const struct {
  int code;
  const char* name;
  const char* text;
} kCodes[] = {
    {0, "SUCCESS", "Success"},
    {1, "UNINITIALIZED", "Uninitialized"},
    {2, "INVALID_ARGUMENT", "Invalid Argument"},
    {3, "NOT_SUPPORTED", "Not Supported"},
    {4, "NO_PERMISSION", "Insufficient Permissions"},
    {5, "ALREADY_INITIALIZED", "Already Initialized"},
    {6, "NOT_FOUND", "Not Found"},
    {7, "INSUFFICIENT_SIZE", "Insufficient Size"},
    {8, "INSUFFICIENT_POWER", "Insufficient External Power"},
    {9, "DRIVER_NOT_LOADED", "Driver Not Loaded"},
    {10, "TIMEOUT", "Timeout"},
    {11, "IRQ_ISSUE", "Interrupt request issue"},
    {12, "LIBRARY_NOT_FOUND", "NVML Shared Library Not Found"},
    {13, "FUNCTION_NOT_FOUND", "Function Not Found"},
    {14, "CORRUPTED_INFOROM", "Corrupted infoROM"},
    {15, "GPU_IS_LOST", "GPU is lost"},
    {16, "RESET_REQUIRED", "GPU requires restart"},
    {17, "OPERATING_SYSTEM", "The operating system has blocked the request."},
    {18, "LIB_RM_VERSION_MISMATCH", "RM has detected an NVML/RM version mismatch."},
    {19, "IN_USE", "In use by another client"},
    {20, "MEMORY", "Insufficient Memory"},
    {21, "NO_DATA", "No data"},
    {999, "UNKNOWN", "Unknown Error"},
};
enum { SUCCESS = 0, UNINITIALIZED = 1, INVALID_ARGUMENT = 2, NOT_FOUND = 6, INSUFFICIENT_SIZE = 7,
       DRIVER_NOT_LOADED = 9, UNKNOWN = 999 };

struct device {
  int present;
  char uuid[96], name[96];
  unsigned long long total, used;
  int used_given;
  unsigned gpu_util, mem_util;
};
struct process {
  int device;
  unsigned pid;
  unsigned long long used;
};
struct sample {
  int device;
  unsigned pid, sm, mem;
  unsigned long long ts; /* 0: the time of the read */
};
struct injected {
  char call[64];
  int device; /* ANY_DEVICE: every device, or a call without one */
  int code;
};
struct scenario {
  char driver[80];
  int init_error;
  unsigned device_count;
  struct device devices[MAX_DEVICES];
  struct process* processes;
  size_t process_count, process_capacity;
  struct sample* samples;
  size_t sample_count, sample_capacity;
  struct injected* errors;
  size_t error_count, error_capacity;
};

static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static struct scenario g_scenario;
static int g_initialized; /* nvmlInit_v2 calls not yet matched by nvmlShutdown */
static struct stat g_seen;  /* the scenario file as last read */
/* Device handles point into this array; a handle's device is its offset. */
static char g_handles[MAX_DEVICES];

static void free_scenario(struct scenario* s) {
  free(s->processes);
  free(s->samples);
  free(s->errors);
  memset(s, 0, sizeof *s);
}

static int code_of(const char* word) {
  char* end = NULL;
  long n = strtol(word, &end, 10);
  if (end != word && *end == '\0') return (int)n;
  for (size_t i = 0; i < sizeof kCodes / sizeof kCodes[0]; ++i) {
    if (strcmp(kCodes[i].name, word) == 0) return kCodes[i].code;
  }
  return -1;
}

/* "key=value" among the words: its value, or NULL. */
static const char* field(char** words, int n, const char* key) {
  size_t len = strlen(key);
  for (int i = 0; i < n; ++i) {
    if (strncmp(words[i], key, len) == 0 && words[i][len] == '=') return words[i] + len + 1;
  }
  return NULL;
}

static int parse_ull(const char* text, unsigned long long* out) {
  if (text == NULL || !isdigit((unsigned char)*text)) return 0;
  char* end = NULL;
  *out = strtoull(text, &end, 10);
  return *end == '\0';
}

static int parse_device(const char* text, int* out) {
  unsigned long long n;
  if (!parse_ull(text, &n) || n >= MAX_DEVICES) return 0;
  *out = (int)n;
  return 1;
}

/* `items` with room for one more `size`-byte item (reallocated when full), or NULL when memory ran out. */
static void* grow(void* items, size_t* capacity, size_t count, size_t size) {
  if (count < *capacity) return items;
  size_t bigger_capacity = *capacity == 0 ? 8 : *capacity * 2;
  void* bigger = realloc(items, bigger_capacity * size);
  if (bigger != NULL) *capacity = bigger_capacity;
  return bigger;
}

/* Splits a line into words in place; a word may be "double quoted" (the device name). */
static int split(char* line, char** words, int max) {
  int n = 0;
  char* p = line;
  while (n < max) {
    while (*p == ' ' || *p == '\t') ++p;
    if (*p == '\0' || *p == '#' || *p == '\n' || *p == '\r') break;
    if (*p == '"') {
      words[n++] = ++p;
      while (*p != '\0' && *p != '"') ++p;
    } else {
      words[n++] = p;
      while (*p != '\0' && *p != ' ' && *p != '\t' && *p != '\n' && *p != '\r') ++p;
    }
    if (*p == '\0') break;
    *p++ = '\0';
  }
  return n;
}

/* One directive into `s`; NULL when it parsed, else what is wrong. */
static const char* parse_line(struct scenario* s, char** w, int n) {
  int dev = 0;
  unsigned long long v = 0;
  if (strcmp(w[0], "driver") == 0) {
    if (n != 2) return "driver <version>";
    snprintf(s->driver, sizeof s->driver, "%s", w[1]);
  } else if (strcmp(w[0], "init-error") == 0) {
    if (n != 2 || (s->init_error = code_of(w[1])) < 0) return "init-error <CODE>";
  } else if (strcmp(w[0], "device") == 0) {
    if (n < 5 || !parse_device(w[1], &dev) || !parse_ull(field(w, n, "total"), &v)) {
      return "device <i> <uuid> \"<name>\" total=<bytes> [used=<bytes>]";
    }
    struct device* d = &s->devices[dev];
    d->present = 1;
    d->total = v;
    snprintf(d->uuid, sizeof d->uuid, "%s", w[2]);
    snprintf(d->name, sizeof d->name, "%s", w[3]);
    if (field(w, n, "used") != NULL) {
      if (!parse_ull(field(w, n, "used"), &d->used)) return "device used=<bytes>";
      d->used_given = 1;
    }
    if ((unsigned)dev + 1 > s->device_count) s->device_count = (unsigned)dev + 1;
  } else if (strcmp(w[0], "process") == 0) {
    const char* used = field(w, n, "used");
    if (n < 3 || !parse_device(w[1], &dev) || !parse_ull(field(w, n, "pid"), &v)) {
      return "process <i> pid=<pid> used=<bytes|na>";
    }
    struct process p = {.device = dev, .pid = (unsigned)v, .used = NVML_VALUE_NOT_AVAILABLE};
    if (used != NULL && strcmp(used, "na") != 0 && !parse_ull(used, &p.used)) return "process used=<bytes|na>";
    void* more = grow(s->processes, &s->process_capacity, s->process_count, sizeof p);
    if (more == NULL) return "out of memory";
    s->processes = more;
    s->processes[s->process_count++] = p;
  } else if (strcmp(w[0], "util") == 0) {
    struct sample x = {0};
    if (n < 4 || !parse_device(w[1], &x.device) || !parse_ull(field(w, n, "pid"), &v)) {
      return "util <i> pid=<pid> sm=<pct> [mem=<pct>] [ts=<us>]";
    }
    x.pid = (unsigned)v;
    if (!parse_ull(field(w, n, "sm"), &v)) return "util sm=<pct>";
    x.sm = (unsigned)v;
    if (field(w, n, "mem") != NULL && parse_ull(field(w, n, "mem"), &v)) x.mem = (unsigned)v;
    if (field(w, n, "ts") != NULL && !parse_ull(field(w, n, "ts"), &x.ts)) return "util ts=<us>";
    void* more = grow(s->samples, &s->sample_capacity, s->sample_count, sizeof x);
    if (more == NULL) return "out of memory";
    s->samples = more;
    s->samples[s->sample_count++] = x;
  } else if (strcmp(w[0], "devutil") == 0) {
    unsigned long long gpu = 0, mem = 0;
    if (n != 4 || !parse_device(w[1], &dev) || !parse_ull(field(w, n, "gpu"), &gpu) ||
        !parse_ull(field(w, n, "mem"), &mem)) {
      return "devutil <i> gpu=<pct> mem=<pct>";
    }
    s->devices[dev].gpu_util = (unsigned)gpu;
    s->devices[dev].mem_util = (unsigned)mem;
  } else if (strcmp(w[0], "error") == 0) {
    struct injected e = {.device = ANY_DEVICE};
    if (n == 4) {
      if (!parse_device(w[2], &e.device)) return "error <call> [<i>] <CODE>";
    } else if (n != 3) {
      return "error <call> [<i>] <CODE>";
    }
    if ((e.code = code_of(w[n - 1])) < 0) return "error: unknown CODE";
    snprintf(e.call, sizeof e.call, "%s", w[1]);
    void* more = grow(s->errors, &s->error_capacity, s->error_count, sizeof e);
    if (more == NULL) return "out of memory";
    s->errors = more;
    s->errors[s->error_count++] = e;
  } else {
    return "unknown directive";
  }
  return NULL;
}

/* Reads the scenario into g_scenario: 1; else g_scenario is unchanged and the result is 0 when the file cannot be
 * read, -1 when it is malformed (both say why on stderr). */
static int load_scenario(void) {
  const char* path = getenv("FAKE_NVML_SCENARIO");
  if (path == NULL || *path == '\0') {
    fprintf(stderr, "fake-nvml: FAKE_NVML_SCENARIO is not set\n");
    return 0;
  }
  FILE* f = fopen(path, "r");
  struct stat st;
  if (f == NULL || fstat(fileno(f), &st) != 0) {
    fprintf(stderr, "fake-nvml: cannot read %s\n", path);
    if (f != NULL) fclose(f);
    return 0;
  }
  struct scenario s;
  memset(&s, 0, sizeof s);
  snprintf(s.driver, sizeof s.driver, "0.0.0-fake");
  char line[1024];
  int number = 0;
  const char* problem = NULL;
  while (problem == NULL && fgets(line, sizeof line, f) != NULL) {
    ++number;
    char* words[16];
    int n = split(line, words, 16);
    if (n > 0) problem = parse_line(&s, words, n);
  }
  fclose(f);
  if (problem != NULL) {
    fprintf(stderr, "fake-nvml: %s:%d: %s\n", path, number, problem);
    free_scenario(&s);
    return -1;
  }
  for (unsigned i = 0; i < s.device_count; ++i) {
    if (!s.devices[i].present) {
      fprintf(stderr, "fake-nvml: %s: device %u is missing (devices are numbered from 0)\n", path, i);
      free_scenario(&s);
      return -1;
    }
    if (!s.devices[i].used_given) {
      for (size_t p = 0; p < s.process_count; ++p) {
        if (s.processes[p].device == (int)i && s.processes[p].used != NVML_VALUE_NOT_AVAILABLE) {
          s.devices[i].used += s.processes[p].used;
        }
      }
    }
  }
  free_scenario(&g_scenario);
  g_scenario = s;
  g_seen = st;
  return 1;
}

/* Every entry point but nvmlInit_v2/nvmlErrorString starts here (under g_lock): the scenario, re-read when its
 * file changed, and the error injected for (call, device), if any. */
static nvmlReturn_t enter(const char* call, int device) {
  if (g_initialized == 0) return UNINITIALIZED;
  const char* path = getenv("FAKE_NVML_SCENARIO");
  struct stat st;
  if (path != NULL && stat(path, &st) == 0 &&
      (st.st_mtim.tv_sec != g_seen.st_mtim.tv_sec || st.st_mtim.tv_nsec != g_seen.st_mtim.tv_nsec ||
       st.st_size != g_seen.st_size || st.st_ino != g_seen.st_ino)) {
    if (load_scenario() != 1) g_seen = st; /* keep the previous scenario; complain once per version */
  }
  for (size_t i = 0; i < g_scenario.error_count; ++i) {
    const struct injected* e = &g_scenario.errors[i];
    if (strcmp(e->call, call) == 0 && (e->device == ANY_DEVICE || e->device == device)) return e->code;
  }
  return SUCCESS;
}

/* The device of a handle, or -1 when the handle is not one this library gave out for a present device. */
static int device_of(nvmlDevice_t handle) {
  const char* p = (const char*)handle;
  if (p < g_handles || p >= g_handles + MAX_DEVICES) return -1;
  int i = (int)(p - g_handles);
  return (unsigned)i < g_scenario.device_count ? i : -1;
}

static unsigned long long now_us(void) {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return (unsigned long long)ts.tv_sec * 1000000ULL + (unsigned long long)ts.tv_nsec / 1000ULL;
}

/* Locks, enters `call` for the device of `handle` (when it has one) and returns from the function on an error. */
#define ENTER_DEVICE(call, handle)                        \
  pthread_mutex_lock(&g_lock);                            \
  nvmlReturn_t rc_ = enter(call, ANY_DEVICE);             \
  int dev = rc_ == SUCCESS ? device_of(handle) : -1;      \
  if (rc_ == SUCCESS && dev < 0) rc_ = INVALID_ARGUMENT;  \
  if (rc_ == SUCCESS) rc_ = enter(call, dev);             \
  if (rc_ != SUCCESS) {                                   \
    pthread_mutex_unlock(&g_lock);                        \
    return rc_;                                           \
  }

EXPORT nvmlReturn_t nvmlInit_v2(void) {
  pthread_mutex_lock(&g_lock);
  nvmlReturn_t rc = SUCCESS;
  if (g_initialized == 0) {
    int loaded = load_scenario();
    if (loaded != 1) {
      rc = loaded == 0 ? DRIVER_NOT_LOADED : UNKNOWN;
    } else if (g_scenario.init_error != SUCCESS) {
      rc = g_scenario.init_error;
    }
  }
  if (rc == SUCCESS) ++g_initialized;
  pthread_mutex_unlock(&g_lock);
  return rc;
}

EXPORT nvmlReturn_t nvmlShutdown(void) {
  pthread_mutex_lock(&g_lock);
  nvmlReturn_t rc = UNINITIALIZED;
  if (g_initialized > 0) {
    rc = SUCCESS;
    if (--g_initialized == 0) free_scenario(&g_scenario);
  }
  pthread_mutex_unlock(&g_lock);
  return rc;
}

EXPORT const char* nvmlErrorString(nvmlReturn_t result) {
  for (size_t i = 0; i < sizeof kCodes / sizeof kCodes[0]; ++i) {
    if (kCodes[i].code == result) return kCodes[i].text;
  }
  return "Unknown Error";
}

EXPORT nvmlReturn_t nvmlSystemGetDriverVersion(char* version, unsigned int length) {
  pthread_mutex_lock(&g_lock);
  nvmlReturn_t rc = enter("nvmlSystemGetDriverVersion", ANY_DEVICE);
  if (rc == SUCCESS && version == NULL) rc = INVALID_ARGUMENT;
  if (rc == SUCCESS && strlen(g_scenario.driver) + 1 > length) rc = INSUFFICIENT_SIZE;
  if (rc == SUCCESS) snprintf(version, length, "%s", g_scenario.driver);
  pthread_mutex_unlock(&g_lock);
  return rc;
}

EXPORT nvmlReturn_t nvmlDeviceGetCount_v2(unsigned int* count) {
  pthread_mutex_lock(&g_lock);
  nvmlReturn_t rc = enter("nvmlDeviceGetCount_v2", ANY_DEVICE);
  if (rc == SUCCESS && count == NULL) rc = INVALID_ARGUMENT;
  if (rc == SUCCESS) *count = g_scenario.device_count;
  pthread_mutex_unlock(&g_lock);
  return rc;
}

EXPORT nvmlReturn_t nvmlDeviceGetHandleByIndex_v2(unsigned int index, nvmlDevice_t* device) {
  pthread_mutex_lock(&g_lock);
  nvmlReturn_t rc = enter("nvmlDeviceGetHandleByIndex_v2", ANY_DEVICE);
  if (rc == SUCCESS && (device == NULL || index >= g_scenario.device_count)) rc = INVALID_ARGUMENT;
  if (rc == SUCCESS) rc = enter("nvmlDeviceGetHandleByIndex_v2", (int)index);
  if (rc == SUCCESS) *device = (nvmlDevice_t)(void*)&g_handles[index];
  pthread_mutex_unlock(&g_lock);
  return rc;
}

static nvmlReturn_t copy_text(const char* text, char* out, unsigned int length) {
  if (out == NULL) return INVALID_ARGUMENT;
  if (strlen(text) + 1 > length) return INSUFFICIENT_SIZE;
  snprintf(out, length, "%s", text);
  return SUCCESS;
}

EXPORT nvmlReturn_t nvmlDeviceGetUUID(nvmlDevice_t device, char* uuid, unsigned int length) {
  ENTER_DEVICE("nvmlDeviceGetUUID", device);
  nvmlReturn_t rc = copy_text(g_scenario.devices[dev].uuid, uuid, length);
  pthread_mutex_unlock(&g_lock);
  return rc;
}

EXPORT nvmlReturn_t nvmlDeviceGetName(nvmlDevice_t device, char* name, unsigned int length) {
  ENTER_DEVICE("nvmlDeviceGetName", device);
  nvmlReturn_t rc = copy_text(g_scenario.devices[dev].name, name, length);
  pthread_mutex_unlock(&g_lock);
  return rc;
}

EXPORT nvmlReturn_t nvmlDeviceGetMemoryInfo(nvmlDevice_t device, nvmlMemory_t* memory) {
  ENTER_DEVICE("nvmlDeviceGetMemoryInfo", device);
  nvmlReturn_t rc = memory == NULL ? INVALID_ARGUMENT : SUCCESS;
  if (rc == SUCCESS) {
    const struct device* d = &g_scenario.devices[dev];
    memory->total = d->total;
    memory->used = d->used;
    memory->free = d->used < d->total ? d->total - d->used : 0;
  }
  pthread_mutex_unlock(&g_lock);
  return rc;
}

EXPORT nvmlReturn_t nvmlDeviceGetComputeRunningProcesses_v3(nvmlDevice_t device, unsigned int* infoCount,
                                                            nvmlProcessInfo_t* infos) {
  ENTER_DEVICE("nvmlDeviceGetComputeRunningProcesses_v3", device);
  nvmlReturn_t rc = SUCCESS;
  unsigned have = 0;
  for (size_t i = 0; i < g_scenario.process_count; ++i) have += g_scenario.processes[i].device == dev;
  if (infoCount == NULL || (infos == NULL && *infoCount != 0)) {
    rc = INVALID_ARGUMENT;
  } else if (*infoCount < have) {
    *infoCount = have;
    rc = INSUFFICIENT_SIZE;
  } else {
    unsigned n = 0;
    for (size_t i = 0; i < g_scenario.process_count; ++i) {
      const struct process* p = &g_scenario.processes[i];
      if (p->device != dev) continue;
      infos[n].pid = p->pid;
      infos[n].usedGpuMemory = p->used;
      infos[n].gpuInstanceId = 0xFFFFFFFFu; /* no MIG */
      infos[n].computeInstanceId = 0xFFFFFFFFu;
      ++n;
    }
    *infoCount = n;
  }
  pthread_mutex_unlock(&g_lock);
  return rc;
}

EXPORT nvmlReturn_t nvmlDeviceGetProcessUtilization(nvmlDevice_t device, nvmlProcessUtilizationSample_t* utilization,
                                                    unsigned int* processSamplesCount,
                                                    unsigned long long lastSeenTimeStamp) {
  ENTER_DEVICE("nvmlDeviceGetProcessUtilization", device);
  nvmlReturn_t rc = SUCCESS;
  unsigned long long now = now_us();
  unsigned have = 0;
  for (size_t i = 0; i < g_scenario.sample_count; ++i) {
    const struct sample* x = &g_scenario.samples[i];
    if (x->device == dev && (x->ts != 0 ? x->ts : now) > lastSeenTimeStamp) ++have;
  }
  if (processSamplesCount == NULL) {
    rc = INVALID_ARGUMENT;
  } else if (have == 0) {
    *processSamplesCount = 0;
    rc = NOT_FOUND;
  } else if (utilization == NULL || *processSamplesCount < have) {
    *processSamplesCount = have;
    rc = INSUFFICIENT_SIZE;
  } else {
    unsigned n = 0;
    for (size_t i = 0; i < g_scenario.sample_count; ++i) {
      const struct sample* x = &g_scenario.samples[i];
      unsigned long long ts = x->ts != 0 ? x->ts : now;
      if (x->device != dev || ts <= lastSeenTimeStamp) continue;
      nvmlProcessUtilizationSample_t out = {
          .pid = x->pid, .timeStamp = ts, .smUtil = x->sm, .memUtil = x->mem, .encUtil = 0, .decUtil = 0};
      utilization[n++] = out;
    }
    *processSamplesCount = n;
  }
  pthread_mutex_unlock(&g_lock);
  return rc;
}

EXPORT nvmlReturn_t nvmlDeviceGetUtilizationRates(nvmlDevice_t device, nvmlUtilization_t* utilization) {
  ENTER_DEVICE("nvmlDeviceGetUtilizationRates", device);
  nvmlReturn_t rc = utilization == NULL ? INVALID_ARGUMENT : SUCCESS;
  if (rc == SUCCESS) {
    utilization->gpu = g_scenario.devices[dev].gpu_util;
    utilization->memory = g_scenario.devices[dev].mem_util;
  }
  pthread_mutex_unlock(&g_lock);
  return rc;
}
