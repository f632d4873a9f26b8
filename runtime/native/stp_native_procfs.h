/* procfs probes' $value (translator/probes/procfs_family.cpp): one buffer, filled by a .read
 * probe for the loader to hand to the FIFO's reader (loader/procfs_files.cpp), or holding what a
 * writer wrote for a .write probe. It grows past MAXSTRINGLEN (`$value .= line` per array
 * element in the prometheus tapset) up to the probe's limit, .maxsize(N) or the default. The
 * loader runs native probes one at a time, so one buffer serves every file. */
#pragma once

#ifndef STP_PROCFS_BUFSIZE
# define STP_PROCFS_BUFSIZE (64 * 1024)  /* SystemTap's own prometheus probe asks for 0x10000 */
#endif

static char *stp_n_procfs_buf;
static size_t stp_n_procfs_len, stp_n_procfs_cap, stp_n_procfs_max = STP_PROCFS_BUFSIZE;

static int stp_n_procfs_reserve(size_t want)
{
  char *p;
  size_t cap;
  if (want + 1 <= stp_n_procfs_cap) return 0;
  cap = stp_n_procfs_cap ? stp_n_procfs_cap : 4096;
  while (cap < want + 1) cap *= 2;
  p = (char *)realloc(stp_n_procfs_buf, cap);
  if (!p) return -1;
  stp_n_procfs_buf = p;
  stp_n_procfs_cap = cap;
  return 0;
}

/* Before the probe: the limit (0: the default) and the initial $value ("" for .read). */
STP_EXPORT int stp_native_procfs_begin(unsigned long maxsize, const char *data, unsigned long len)
{
  stp_n_procfs_max = maxsize ? maxsize : STP_PROCFS_BUFSIZE;
  if (len > stp_n_procfs_max) len = stp_n_procfs_max;
  if (stp_n_procfs_reserve(len) != 0) return -1;
  if (len) memcpy(stp_n_procfs_buf, data, len);
  stp_n_procfs_len = len;
  stp_n_procfs_buf[len] = 0;
  return 0;
}

/* After it: $value. */
STP_EXPORT const char *stp_native_procfs_value(unsigned long *len)
{
  *len = stp_n_procfs_len;
  return stp_n_procfs_buf ? stp_n_procfs_buf : "";
}

static const char *stp_n_procfs_get(void) { return stp_n_procfs_buf ? stp_n_procfs_buf : ""; }

/* $value .= s: cut at the limit, as SystemTap's procfs buffer is. */
static void stp_n_procfs_append(const char *s)
{
  size_t n = strlen(s);
  if (stp_n_procfs_len + n > stp_n_procfs_max) n = stp_n_procfs_max - stp_n_procfs_len;
  if (stp_n_procfs_reserve(stp_n_procfs_len + n) != 0) return;
  memcpy(stp_n_procfs_buf + stp_n_procfs_len, s, n);
  stp_n_procfs_len += n;
  stp_n_procfs_buf[stp_n_procfs_len] = 0;
}

/* $value = s (s may be $value itself or point into it). */
static void stp_n_procfs_set(const char *s)
{
  if (s == stp_n_procfs_buf) return;
  if (stp_n_procfs_buf && s > stp_n_procfs_buf && s < stp_n_procfs_buf + stp_n_procfs_cap) {
    size_t n = strlen(s);
    memmove(stp_n_procfs_buf, s, n + 1);
    stp_n_procfs_len = n;
    return;
  }
  stp_n_procfs_len = 0;
  if (stp_n_procfs_buf) stp_n_procfs_buf[0] = 0;
  stp_n_procfs_append(s);
}

#define stp_procfs_value(c) stp_n_procfs_get()
#define stp_procfs_set(c, s) stp_n_procfs_set(s)
#define stp_procfs_append(c, s) stp_n_procfs_append(s)
