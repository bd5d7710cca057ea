/* io_floor: the I/O floor for `npyguard check` over many small files.
 *
 * For each path: open(O_RDONLY | O_CLOEXEC), fstat, pread of 4096 bytes at
 * offset 0, close. Nothing else: no parsing, no output per file. This is the
 * least any tool that validates a file from its first bytes and its size has
 * to do, so many_files.py compares `npyguard check` against it.
 *
 * Usage: io_floor PATH...
 *        io_floor -     (paths from standard input, separated by NUL or newline)
 *
 * Exit status 0 when every file was opened, stat'ed and read; 2 (with one
 * line on stderr for the first failure) otherwise, so a broken benchmark
 * setup cannot pass for a fast floor.
 */
#define _POSIX_C_SOURCE 200809L

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

enum { prefix_size = 4096 };

static int failures;

static void touch(const char* path) {
  static unsigned char prefix[prefix_size];
  struct stat info;
  const int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    if (failures++ == 0) fprintf(stderr, "io_floor: %s: cannot open: %s\n", path, strerror(errno));
    return;
  }
  if (fstat(fd, &info) != 0 || pread(fd, prefix, sizeof prefix, 0) < 0) {
    if (failures++ == 0) fprintf(stderr, "io_floor: %s: %s\n", path, strerror(errno));
  }
  close(fd);
}

/* Reads all of stdin once, then walks it; the read is part of the floor's
 * cost just as argv parsing is part of the tool's. */
static int touch_stdin_list(void) {
  size_t capacity = 1 << 20;
  size_t size = 0;
  char* list = malloc(capacity + 1);
  if (list == NULL) return 2;
  for (;;) {
    if (size == capacity) {
      char* grown = realloc(list, capacity * 2 + 1);
      if (grown == NULL) {
        free(list);
        return 2;
      }
      list = grown;
      capacity *= 2;
    }
    const ssize_t n = read(0, list + size, capacity - size);
    if (n < 0) {
      if (errno == EINTR) continue;
      perror("io_floor: stdin");
      free(list);
      return 2;
    }
    if (n == 0) break;
    size += (size_t)n;
  }
  list[size] = '\0';
  char* start = list;
  for (size_t i = 0; i <= size; ++i) {
    if (list[i] == '\0' || list[i] == '\n') {
      list[i] = '\0';
      if (*start != '\0') touch(start);
      start = list + i + 1;
    }
  }
  free(list);
  return 0;
}

int main(int argc, char** argv) {
  if (argc == 2 && strcmp(argv[1], "-") == 0) {
    if (touch_stdin_list() != 0) return 2;
  } else {
    for (int i = 1; i < argc; ++i) touch(argv[i]);
  }
  return failures == 0 ? 0 : 2;
}
