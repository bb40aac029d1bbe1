/* Runs a command as a child and prints its CPU and peak memory as the kernel accounts them
 * (wait4): "cpu_s wall_s peak_kib exit". A small C parent, so that the child's peak RSS does not
 * hold the parent's own (Linux's ru_maxrss carries the forking process's pages across exec).
 *   cc -O2 -o rusage_run bench/rusage_run.c ; rusage_run CMD [ARG ...]   (bench/cost_scaling.py) */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: rusage_run CMD [ARG ...]\n");
        return 2;
    }
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    pid_t pid = fork();
    if (pid == 0) {
        int null = open("/dev/null", O_RDWR);
        dup2(null, 1);
        dup2(null, 2);
        execvp(argv[1], argv + 1);
        _exit(127);
    }
    int st;
    struct rusage ru;
    if (pid < 0 || wait4(pid, &st, 0, &ru) != pid)
        return 1;
    clock_gettime(CLOCK_MONOTONIC, &t1);
    printf("%.6f %.6f %ld %d\n", ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 + ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6,
           (t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9, ru.ru_maxrss,
           WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st));
    return 0;
}
