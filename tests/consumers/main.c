/* A C program that embeds npyguard through the C API only (npyguard.h),
 * built with nothing but `pkg-config --cflags --libs npyguard` against a
 * static and a shared install (tests/consumers/run.sh). */
#include <npyguard.h>

#include <stdio.h>
#include <string.h>

int main(void) {
  const char* dict = "{'descr': '<f8', 'fortran_order': False, 'shape': (3,), }";
  unsigned char file[128 + 24 + 2];
  size_t size = 128 + 24;
  npyguard_options opts;
  npyguard_result* checked;
  char descr[16];
  int status = 0;
  memcpy(file, "\x93NUMPY\x01\x00\x76\x00", 10); /* HEADER_LEN 118: data at 128 */
  memset(file + 10, ' ', 118);
  memcpy(file + 10, dict, strlen(dict));
  file[127] = '\n';
  memset(file + 128, 0, 24);
  memcpy(file + size, "PK", 2);
  npyguard_options_init(&opts, sizeof opts);

  checked = npyguard_check_buffer(NPYGUARD_FORMAT_DETECT, file, size, &opts);
  if (!npyguard_result_ok(checked) || npyguard_npy_nbytes(npyguard_result_npy(checked)) != 24) status = 1;
  npyguard_dtype_descr(npyguard_npy_dtype(npyguard_result_npy(checked)), descr, sizeof descr);
  npyguard_result_free(checked);

  checked = npyguard_check_buffer(NPYGUARD_FORMAT_NPY, file, size + 2, &opts); /* a polyglot */
  if (npyguard_result_ok(checked) || npyguard_result_error(checked)->code != NPYGUARD_E_TRAILING_DATA ||
      npyguard_result_error(checked)->offset != size) {
    status = 1;
  }
  npyguard_result_free(checked);
  printf("npyguard %s from C: %s%s\n", npyguard_version(), descr, status == 0 ? "" : " (FAILED)");
  return status;
}
