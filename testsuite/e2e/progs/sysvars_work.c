/* sysvars_work -- issues a fixed set of system calls with known arguments, for
 * testsuite/e2e/syscall_vars.sh (ukstap's syscall aliases against strace of the same run).
 * Every call goes through syscall(2) or a thin libc wrapper so that strace and the tracepoints
 * see exactly these arguments. Argument 1: a scratch directory. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <arpa/inet.h>
#include <linux/futex.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	char path[4096], buf[64];
	const char *dir = argc > 1 ? argv[1] : "/tmp";
	snprintf(path, sizeof path, "%s/sysvars-file", dir);

	int fd = syscall(SYS_openat, AT_FDCWD, path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0640);
	syscall(SYS_write, fd, "hello\n", 6);
	struct iovec iov[2] = {{"ab", 2}, {"cd\n", 3}};
	syscall(SYS_writev, fd, iov, 2);
	syscall(SYS_close, fd);
	fd = syscall(SYS_openat, AT_FDCWD, path, O_RDONLY);
	syscall(SYS_read, fd, buf, 5);
	syscall(SYS_lseek, fd, 2, SEEK_SET);
	syscall(SYS_pread64, fd, buf, 3, 1);
	int fd2 = syscall(SYS_dup, fd);
	syscall(SYS_dup3, fd, 9, O_CLOEXEC);
	syscall(SYS_fcntl, fd, F_GETFL);
	syscall(SYS_close, fd2);
	syscall(SYS_close, fd);
	syscall(SYS_access, path, R_OK | W_OK);
	syscall(SYS_faccessat, AT_FDCWD, path, X_OK);
	syscall(SYS_unlinkat, AT_FDCWD, path, 0);
	syscall(SYS_mkdirat, AT_FDCWD, path, 0750);
	syscall(SYS_unlinkat, AT_FDCWD, path, AT_REMOVEDIR);
	syscall(SYS_umask, 022);

	void *p = (void *)syscall(SYS_mmap, NULL, 8192, PROT_READ | PROT_WRITE,
				  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	syscall(SYS_madvise, p, 4096, MADV_DONTNEED);
	syscall(SYS_mprotect, p, 4096, PROT_READ);
	syscall(SYS_munmap, p, 8192);

	int word = 0;
	syscall(SYS_futex, &word, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
	struct timespec fts = {0, 2500};
	syscall(SYS_futex, &word, FUTEX_WAIT, 1, &fts, NULL, 0); /* word != 1: EAGAIN at once */

	int sv[2];
	syscall(SYS_socketpair, AF_UNIX, SOCK_STREAM, 0, sv);
	syscall(SYS_sendto, sv[0], "ping", 4, MSG_DONTWAIT, NULL, 0);
	syscall(SYS_recvfrom, sv[1], buf, sizeof buf, MSG_PEEK, NULL, NULL);
	struct pollfd pfd = {sv[1], POLLIN, 0};
	syscall(SYS_poll, &pfd, 1, 0);
	syscall(SYS_close, sv[0]);
	syscall(SYS_close, sv[1]);
	int s = syscall(SYS_socket, AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	struct sockaddr_in sin = {.sin_family = AF_INET, .sin_port = htons(9)};
	inet_pton(AF_INET, "127.0.0.1", &sin.sin_addr);
	syscall(SYS_connect, s, &sin, sizeof sin); /* UDP: no packet is sent */
	syscall(SYS_close, s);

	struct timespec ts = {0, 1000};
	syscall(SYS_nanosleep, &ts, NULL);
	syscall(SYS_clock_nanosleep, CLOCK_MONOTONIC, 0, &ts, NULL);
	syscall(SYS_getrandom, buf, 8, GRND_NONBLOCK);
	struct rlimit rl;
	syscall(SYS_prlimit64, 0, RLIMIT_NOFILE, NULL, &rl);

	/* A child killed by a signal, then one that exits with a status. */
	pid_t c = fork();
	if (c == 0) {
		for (;;)
			pause();
	}
	syscall(SYS_kill, c, SIGTERM);
	int st;
	syscall(SYS_wait4, c, &st, 0, NULL);
	c = fork();
	if (c == 0)
		syscall(SYS_exit_group, 7);
	syscall(SYS_wait4, c, &st, __WALL, NULL);
	syscall(SYS_exit_group, 0);
	return 0;
}
