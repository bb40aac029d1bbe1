/* The command line against untrusted files: a sweep directory, an archive or a command line from a
 * stranger. Every case is hostile and built here, in the test (synthetic: nothing
 * in it was recorded): a sweep.json that carries a command or free flags, links
 * planted where a sweep writes its logs, statuses and archives, #SBATCH options with
 * newlines, output directories that are or hold an input, kills during the final
 * renames, a disk too small for report.pdf, two renders of one archive at once, too
 * little memory, an unreadable run.json and numbers that only look decimal. Each test
 * that runs the binary fails with the binary of the commit before this work (26b40b0,
 * checked); the in-process ones test archive_write_file, archive_read and attn_oom, whose
 * old forms wrote through the link, said "not valid JSON" and did not exist. The kill
 * tests slow rename(2) down with tests/fault/slow_rename.c (LD_PRELOAD, built here), as
 * a network file system would; the full disk is a small tmpfs (root only, else skipped).
 * No GPU needed. */
#include <criterion/criterion.h>
#include "slurp.h"
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "alloc.h"
#include "archive.h"
#include "archive_read.h"
#include "cleanup.h"
#include "exit_codes.h"
#include "report.h"
#include "sweep_doc.h"

#include "run_cli.h"

/* AddressSanitizer replaces malloc and reserves terabytes of shadow memory: RLIMIT_AS cannot
 * bound such a process, and an impossible allocation is ASan's own report, not attnprof's. The
 * memory tests therefore run in `make test` and say so under `make sanitize`. */
#if defined(__SANITIZE_ADDRESS__)
#define UNDER_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define UNDER_ASAN 1
#endif
#endif
#ifdef UNDER_ASAN
#define SKIP_UNDER_ASAN() cr_skip_test("RLIMIT_AS cannot bound a process under AddressSanitizer: run by make test")
#else
#define SKIP_UNDER_ASAN() ((void)0)
#endif

static void tmpdir(char *out, size_t n, const char *tag)
{
    snprintf(out, n, "/tmp/attnprof-hard-%s-%d", tag, (int)getpid());
    remove_tree(out);
}

static void sh(const char *cmd) { cr_assert_eq(system(cmd), 0, "%s", cmd); }

static void write_text(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    cr_assert(f, "%s: %s", path, strerror(errno));
    fputs(text, f);
    fclose(f);
}

static void assert_one_line(const char *what)
{
    size_t len = strlen(err_text);
    cr_expect(len > 0 && strchr(err_text, '\n') == err_text + len - 1 && !strncmp(err_text, "attnprof: ", 10),
              "%s: one line: %s", what, err_text);
}

/* Runs the binary with argv (no shell), stderr into err_text; exit code or 128+signal. */
static int run_argv(char *const argv[])
{
    char errf[] = "/tmp/attnprof-hard-stderr-XXXXXX";
    int efd = mkstemp(errf);
    pid_t pid = fork();
    cr_assert(pid >= 0);
    if (pid == 0) {
        int nul = open("/dev/null", O_RDWR);
        dup2(nul, 0);
        dup2(nul, 1);
        dup2(efd, 2);
        execv(attnprof_bin(), argv);
        _exit(127);
    }
    close(efd);
    int st;
    waitpid(pid, &st, 0);
    read_into(errf, err_text, sizeof err_text);
    unlink(errf);
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

/* A sweep plan as `sweep --slurm` writes it (nothing runs), then one field of its
 * sweep.json replaced by a hostile value. */
static void planned_sweep(const char *dir, const char *task_command)
{
    char args[2048];
    snprintf(args, sizeof args, "sweep --slurm --no-gres --seq 256 --dim 64 --tokens 1024 --heads 4 -o %s%s%s%s", dir,
             task_command ? " --slurm-task-command '" : "", task_command ? task_command : "", task_command ? "'" : "");
    cr_assert_eq(attnprof(args), EXIT_OK, "%s", err_text);
}

static void set_plan_field(const char *dir, const char *key, json_t *value)
{
    char path[512];
    snprintf(path, sizeof path, "%s/sweep.json", dir);
    json_error_t je;
    json_t *root = json_load_file(path, 0, &je);
    cr_assert(root, "%s", je.text);
    json_object_set_new(root, key, value);
    cr_assert_eq(json_dump_file(root, path, JSON_INDENT(2)), 0);
    json_decref(root);
}

static void task_command(char *out, size_t n, const char *extra)
{
    char cwd[1024];
    cr_assert(getcwd(cwd, sizeof cwd));
    snprintf(out, n, "%s/tests/sweep/task.sh %s/tests/fixtures/h200-6var {dir} {batch} {heads} {seq} {dim} 0%s", cwd,
             cwd, extra);
}

/* ---- D01: nothing from disk is a command ------------------------------------- */

Test(hardening_sweep, a_stored_task_command_is_never_run)
{
    char dir[256], marker[300], cmd[600], args[2048];
    tmpdir(dir, sizeof dir, "d01");
    snprintf(marker, sizeof marker, "%s-ran", dir);
    unlink(marker);
    planned_sweep(dir, NULL);
    /* Someone else's sweep.json: each shape "runs" a command of theirs. */
    snprintf(cmd, sizeof cmd, "touch %s", marker);
    set_plan_field(dir, "task_command", json_string(cmd));

    snprintf(args, sizeof args, "sweep --resume -o %s", dir);
    cr_expect_eq(attnprof(args), EXIT_REFUSED, "--resume: %s", err_text);
    assert_one_line("--resume");
    cr_expect(strstr(err_text, cmd) != NULL, "the refusal names the stored command: %s", err_text);
    cr_expect(!path_exists(marker), "--resume ran the command stored in sweep.json");

    snprintf(args, sizeof args, "sweep --task 0 %s", dir);
    cr_expect_eq(attnprof(args), EXIT_REFUSED, "--task: %s", err_text);
    assert_one_line("--task");
    cr_expect(!path_exists(marker), "--task ran the command stored in sweep.json");

    /* Another command on the command line than the plan's: refused too, nothing runs. */
    snprintf(args, sizeof args, "sweep --resume -o %s --task-command 'true {dir}'", dir);
    cr_expect_eq(attnprof(args), EXIT_REFUSED, "another command: %s", err_text);
    assert_one_line("another command");
    cr_expect(!path_exists(marker));

    /* The same command, given on the command line by whoever resumes: that one runs. */
    snprintf(args, sizeof args, "sweep --resume -o %s --task-command '%s'", dir, cmd);
    cr_expect_eq(attnprof(args), EXIT_VARIANT_FAILED, "the shape leaves no archive: %s", err_text);
    cr_expect(path_exists(marker), "a command the command line gives runs");
    unlink(marker);
    remove_tree(dir);
}

Test(hardening_sweep, the_generated_sbatch_gives_the_task_command_itself)
{
    char dir[256], t[1024], path[512];
    tmpdir(dir, sizeof dir, "sbatchcmd");
    task_command(t, sizeof t, " x'y");
    char args[2048];
    /* A quote inside the command: the sbatch line quotes it for the shell. */
    snprintf(args, sizeof args,
             "sweep --slurm --no-gres --seq 256 --dim 64 --tokens 1024 --heads 4 -o %s --slurm-task-command \"%s\"",
             dir, t);
    cr_assert_eq(attnprof(args), EXIT_OK, "%s", err_text);
    snprintf(path, sizeof path, "%s/sweep.sbatch", dir);
    char *s = slurp(path);
    cr_assert(s);
    /* What bash makes of the exec line's --task-command word is the command itself. */
    char check[4096];
    snprintf(check, sizeof check,
             "line=$(grep '^exec ' %s) && eval \"set -- ${line#exec }\" && while [ $# -gt 0 ] && [ \"$1\" != "
             "--task-command ]; do shift; done && [ \"$2\" = \"$(cat %s/cmd)\" ]",
             path, dir);
    write_text((snprintf(path, sizeof path, "%s/cmd", dir), path), t);
    cr_expect_eq(system(check), 0, "the sbatch's --task-command is the command given: %s", s);
    free(s);
    remove_tree(dir);
}

Test(hardening_sweep, run_flags_iters_and_variants_from_sweep_json_are_checked)
{
    char dir[256], args[1024];
    tmpdir(dir, sizeof dir, "flags");
    struct {
        const char *key;
        json_t *value;
    } bad[] = {
        {"run_flags", json_string(" --no-counters --output /etc")},
        {"run_flags", json_string(" --seed 1;id")},
        {"run_flags", json_string(" --seed")},
        {"iters", json_string("5 --output /tmp")},
        {"iters", json_integer(1000000000)},
        {"warmup", json_integer(-1)},
        {"variants", json_string("flash,--output=/etc")},
        {"variants", json_string("flash;id")},
        {"task_command", json_integer(3)},
        {"slurm_job_id", json_string("1\n2")},
        {"shapes", json_pack("[{s:i,s:i,s:i,s:i}]", "batch", 1, "heads", 1, "seq", 1 << 21, "dim", 64)},
        {"gpus", json_pack("[s]", "0 --output /etc")},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        remove_tree(dir);
        planned_sweep(dir, NULL);
        char *text = json_dumps(bad[i].value, JSON_ENCODE_ANY);
        set_plan_field(dir, bad[i].key, bad[i].value);
        snprintf(args, sizeof args, "sweep --resume -o %s", dir);
        cr_expect_eq(attnprof(args), EXIT_BAD_ARCHIVE, "%s = %s: %s", bad[i].key, text, err_text);
        assert_one_line(bad[i].key);
        cr_expect(strstr(err_text, bad[i].key) != NULL, "names the field %s: %s", bad[i].key, err_text);
        snprintf(args, sizeof args, "sweep --task 0 %s", dir);
        cr_expect_eq(attnprof(args), EXIT_BAD_ARCHIVE, "--task with %s = %s: %s", bad[i].key, text, err_text);
        free(text);
    }
    remove_tree(dir);
}

Test(hardening_sweep, partition_and_time_cannot_add_lines_to_the_sbatch)
{
    char dir[256], path[512];
    tmpdir(dir, sizeof dir, "sbatchnl");
    char *p1[] = {"attnprof", "sweep", "--slurm", "--seq", "256", "--dim", "64", "--partition", "gpu\nrm -rf ~",
                  "-o", dir, NULL};
    char *p2[] = {"attnprof", "sweep", "--slurm", "--seq", "256", "--dim", "64", "--time", "10\n#SBATCH --uid=0",
                  "-o", dir, NULL};
    char *p3[] = {"attnprof", "sweep", "--slurm", "--seq", "256", "--dim", "64", "--partition", "gpu $(id)", "-o", dir,
                  NULL};
    char **cases[] = {p1, p2, p3};
    for (size_t i = 0; i < 3; i++) {
        cr_expect_eq(run_argv(cases[i]), EXIT_USAGE, "case %zu: %s", i, err_text);
        assert_one_line("--partition/--time");
        snprintf(path, sizeof path, "%s/sweep.sbatch", dir);
        cr_expect(!path_exists(path), "case %zu: no sweep.sbatch written", i);
        remove_tree(dir);
    }
    /* A directory whose path holds a newline cannot go into #SBATCH --output. */
    char nl[300];
    snprintf(nl, sizeof nl, "%s/a\nb", dir);
    mkdir(dir, 0755);
    char *p4[] = {"attnprof", "sweep", "--slurm", "--seq", "256", "--dim", "64", "-o", nl, NULL};
    cr_expect_eq(run_argv(p4), EXIT_USAGE, "%s", err_text);
    assert_one_line("a newline in -o");
    remove_tree(dir);
}

/* ---- D02: logs, statuses, staging and archives never through a link ------------- */

Test(hardening_sweep, a_link_in_logs_is_refused_and_its_target_untouched)
{
    char dir[256], victim[300], link[512], args[2048], t[1024];
    tmpdir(dir, sizeof dir, "d02");
    snprintf(victim, sizeof victim, "%s-victim", dir);
    write_text(victim, "precious\n");
    task_command(t, sizeof t, "");
    planned_sweep(dir, t);
    sh((snprintf(args, sizeof args, "mkdir -p %s/logs", dir), args));
    snprintf(link, sizeof link, "%s/logs/4x4x256x64.log", dir);
    cr_assert_eq(symlink(victim, link), 0);
    snprintf(args, sizeof args, "sweep --resume -o %s --task-command '%s'", dir, t);
    cr_expect_eq(attnprof(args), EXIT_REFUSED, "%s", err_text);
    assert_one_line("a link in logs/");
    cr_expect(strstr(err_text, "symbolic link") != NULL, "%s", err_text);
    char *v = slurp(victim);
    cr_expect(v && !strcmp(v, "precious\n"), "the link's target was written: '%s'", v ? v : "(gone)");
    free(v);
    /* The same through --task (the Slurm array's path). */
    snprintf(args, sizeof args, "sweep --task 0 --task-command '%s' %s", t, dir);
    cr_expect_eq(attnprof(args), EXIT_REFUSED, "--task: %s", err_text);
    v = slurp(victim);
    cr_expect(v && !strcmp(v, "precious\n"), "--task wrote through the link: '%s'", v ? v : "(gone)");
    free(v);
    unlink(victim);
    remove_tree(dir);
}

Test(hardening_sweep, a_linked_shapes_or_status_folder_is_refused)
{
    char dir[256], outside[300], args[2048], t[1024], keep[512];
    tmpdir(dir, sizeof dir, "d02b");
    snprintf(outside, sizeof outside, "%s-outside", dir);
    remove_tree(outside);
    task_command(t, sizeof t, "");
    const char *subs[] = {"shapes", "status", ".staging", "logs"};
    for (size_t i = 0; i < sizeof subs / sizeof subs[0]; i++) {
        remove_tree(dir);
        planned_sweep(dir, t);
        /* Outside DIR: a folder named as the shape, holding a file someone keeps. */
        sh((snprintf(args, sizeof args, "rm -rf %s && mkdir -p %s/4x4x256x64 && echo keep > %s/4x4x256x64/keep && "
                     "echo keep > %s/4x4x256x64.json && echo keep > %s/4x4x256x64.log",
                     outside, outside, outside, outside, outside),
            args));
        sh((snprintf(args, sizeof args, "rm -rf %s/%s && ln -s %s %s/%s", dir, subs[i], outside, dir, subs[i]), args));
        snprintf(args, sizeof args, "sweep --resume -o %s --task-command '%s'", dir, t);
        cr_expect_eq(attnprof(args), EXIT_REFUSED, "%s as a link: %s", subs[i], err_text);
        assert_one_line(subs[i]);
        snprintf(keep, sizeof keep, "%s/4x4x256x64/keep", outside);
        cr_expect(path_exists(keep), "%s as a link: a file outside DIR was removed", subs[i]);
        snprintf(args, sizeof args, "test \"$(cat %s/4x4x256x64.json %s/4x4x256x64.log)\" = \"$(printf 'keep\\nkeep')\" && "
                 "test \"$(ls %s | wc -l)\" = 3", outside, outside, outside);
        cr_expect_eq(system(args), 0, "%s as a link: something was written outside DIR", subs[i]);
    }
    remove_tree(outside);
    remove_tree(dir);
}

Test(hardening_files, a_planted_link_at_the_temporary_name_is_not_written_through)
{
    char dir[256], victim[300], tmp[512], path[512], err[512];
    tmpdir(dir, sizeof dir, "atomic");
    mkdir(dir, 0755);
    snprintf(victim, sizeof victim, "%s-victim", dir);
    write_text(victim, "precious\n");
    /* archive_write_file's temporary is NAME.tmp-PID: predictable, so planted. */
    snprintf(tmp, sizeof tmp, "%s/status.json.tmp-%d", dir, (int)getpid());
    cr_assert_eq(symlink(victim, tmp), 0);
    cr_expect_eq(archive_write_file(dir, "status.json", "{}\n", err, sizeof err), 0, "%s", err);
    char *v = slurp(victim);
    cr_expect(v && !strcmp(v, "precious\n"), "written through the planted link: '%s'", v ? v : "(gone)");
    free(v);
    snprintf(path, sizeof path, "%s/status.json", dir);
    v = slurp(path);
    cr_expect(v && !strcmp(v, "{}\n"), "the file itself is written: '%s'", v ? v : "(none)");
    free(v);
    unlink(victim);
    remove_tree(dir);
}

/* ---- numbers are decimal ---------------------------------------------------------- */

Test(hardening_cli, numeric_options_are_strictly_decimal)
{
    const char *bad[] = {"compare a b -o c --min-effect 0x10",  "compare a b -o c --min-effect 1e1",
                         "compare a b -o c --min-effect inf",   "compare a b -o c --min-effect ' 5'",
                         "compare a b -o c --min-effect +5",    "compare a b -o c --min-effect .",
                         "import t.json -o d --shape +8x16x1024x64", "import t.json -o d --shape '8x 16x1024x64'",
                         "import t.json -o d --shape 8x16x1024x0x10", "sweep -o /tmp/x --seq ' 256'",
                         "sweep -o /tmp/x --seq 256:+1024:x2",   "sweep -o /tmp/x --dim 0x40"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        cr_expect_eq(attnprof(bad[i]), EXIT_USAGE, "%s: %s", bad[i], err_text);
        assert_one_line(bad[i]);
    }
    /* Plain decimals still read. */
    cr_expect_neq(attnprof("compare /nonexistent-a /nonexistent-b -o /tmp/attnprof-hard-never --min-effect 2.5"),
                  EXIT_USAGE, "%s", err_text);
}

/* ---- all or nothing: outputs apart from inputs, kills, locks, a full disk ------------ */

static void fixture_copy(const char *from, const char *to)
{
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "rm -rf %s && mkdir -p %s && cp %s/trace.json %s/run.json %s/", to, to, from, from, to);
    sh(cmd);
}

Test(hardening_outputs, an_output_that_is_holds_or_lies_inside_an_input_is_refused)
{
    char dir[256], a[300], b[300], args[2048], path[512];
    tmpdir(dir, sizeof dir, "overlap");
    snprintf(a, sizeof a, "%s/A", dir);
    snprintf(b, sizeof b, "%s/B", dir);
    fixture_copy("tests/fixtures/h200-4var", a);
    fixture_copy("tests/fixtures/h200-4var", b);
    const char *outs[] = {"%s/A", "%s/A/", "%s", "%s/A/cmp", "%s/B/../A", "%s/new/../A"};
    for (size_t i = 0; i < sizeof outs / sizeof outs[0]; i++) {
        char out[300];
        snprintf(out, sizeof out, outs[i], dir);
        snprintf(args, sizeof args, "compare %s %s -o %s --force -q", a, b, out);
        cr_expect_eq(attnprof(args), EXIT_USAGE, "%s: %s", args, err_text);
        assert_one_line(args);
        snprintf(path, sizeof path, "%s/trace.json", a);
        cr_expect(path_exists(path), "compare -o %s --force deleted its input", out);
    }
    /* A link to the input is the input. */
    char link[300];
    snprintf(link, sizeof link, "%s/linked", dir);
    cr_assert_eq(symlink(a, link), 0);
    snprintf(args, sizeof args, "compare %s %s -o %s --force -q", a, b, link);
    cr_expect_eq(attnprof(args), EXIT_USAGE, "%s", err_text);
    /* import: the archive to write holds the trace it reads. */
    snprintf(args, sizeof args, "import %s/trace.json -o %s --force -q", a, a);
    cr_expect_eq(attnprof(args), EXIT_USAGE, "%s", err_text);
    snprintf(path, sizeof path, "%s/trace.json", a);
    cr_expect(path_exists(path), "import -o A --force deleted its input");
    /* Apart from the inputs, compare still writes. */
    snprintf(args, sizeof args, "compare %s %s -o %s/C -q", a, b, dir);
    cr_expect_eq(attnprof(args), EXIT_OK, "%s", err_text);
    remove_tree(dir);
}

static const char *const outputs[] = {"report.md", "report.html", "summary.csv", "summary.tex", "figures"};

/* The inode of figures/occupancy.png when the outputs were marked: the same one later is the
 * old figure (a render draws every figure anew; a file of someone else's in figures/ would be
 * kept by every render, so a figure it makes is the mark). */
static ino_t old_figure;

static ino_t figure_inode(const char *dir)
{
    char path[512];
    struct stat st;
    snprintf(path, sizeof path, "%s/figures/occupancy.png", dir);
    return stat(path, &st) == 0 ? st.st_ino : 0;
}

/* Marks the current outputs as old: a line in each document, the inode of a figure. */
static void mark_old(const char *dir)
{
    char cmd[2048];
    snprintf(cmd, sizeof cmd, "cd %s && for f in report.md report.html summary.csv summary.tex; do echo OLD-OUTPUT >> "
             "$f; done", dir);
    sh(cmd);
    old_figure = figure_inode(dir);
}

/* How many of the five outputs carry the old mark (-1: one is missing). */
static int old_marks(const char *dir)
{
    int n = 0;
    char path[512];
    for (int i = 0; i < 5; i++) {
        snprintf(path, sizeof path, "%s/%s", dir, outputs[i]);
        if (!path_exists(path))
            return -1;
        if (i == 4) {
            n += figure_inode(dir) == old_figure;
        } else {
            char *t = slurp(path);
            n += t && strstr(t, "OLD-OUTPUT") != NULL;
            free(t);
        }
    }
    return n;
}

static const char *slow_rename_lib(void)
{
    static char lib[128];
    snprintf(lib, sizeof lib, "/tmp/attnprof-slow-rename-%d.so", (int)getpid());
    char cmd[512];
    snprintf(cmd, sizeof cmd, "cc -shared -fPIC -O1 -o %s tests/fault/slow_rename.c -ldl 2>/dev/null", lib);
    if (system(cmd) != 0)
        cr_skip_test("no C compiler to build the slow-rename helper");
    return lib;
}

/* Starts `attnprof ARGV...` (argv[0] is the first argument, NULL-terminated) with stdout and
 * stderr on /dev/null and, when `preload` is set, the slow-rename helper preloaded (renames of
 * slow_ms each; NULL: the helper's default). The child's pid. */
static pid_t spawn_attnprof(const char *preload, const char *slow_ms, const char *const argv[])
{
    const char *args[16] = {attnprof_bin()};
    for (int i = 0; argv[i] && i < 14; i++)
        args[i + 1] = argv[i];
    pid_t pid = fork();
    cr_assert(pid >= 0);
    if (pid == 0) {
        int nul = open("/dev/null", O_RDWR);
        dup2(nul, 1);
        dup2(nul, 2);
        if (preload)
            setenv("LD_PRELOAD", preload, 1);
        if (slow_ms)
            setenv("ATTNPROF_SLOW_RENAME_MS", slow_ms, 1);
        execv(attnprof_bin(), (char *const *)args);
        _exit(127);
    }
    return pid;
}

/* Waits (2 ms polls, 20 s at most) until `path` exists: the point a kill is timed from. */
static void wait_for_path(const char *path)
{
    struct timespec poll = {0, 2 * 1000 * 1000};
    for (int i = 0; i < 10000 && !path_exists(path); i++)
        nanosleep(&poll, NULL);
}

static pid_t start_report(const char *dir, const char *preload, const char *extra)
{
    pid_t pid = fork();
    cr_assert(pid >= 0);
    if (pid == 0) {
        int nul = open("/dev/null", O_RDWR);
        dup2(nul, 1);
        dup2(nul, 2);
        if (preload) {
            setenv("LD_PRELOAD", preload, 1);
            setenv("ATTNPROF_SLOW_RENAME_MS", "60", 1);
        }
        setenv("ATTNPROF_PDF", "0", 1);
        execl(attnprof_bin(), attnprof_bin(), "report", dir, "-q", "--format", "png", extra, (char *)NULL);
        _exit(127);
    }
    return pid;
}

static int leftovers(const char *dir)
{
    char cmd[512];
    snprintf(cmd, sizeof cmd, "ls -A %s | grep -q -e '^\\.report\\.' -e '\\.tmp-'", dir);
    return system(cmd) == 0;
}

Test(hardening_outputs, a_kill_during_the_final_renames_leaves_every_output, .timeout = 240)
{
    char dir[256], args[1024];
    tmpdir(dir, sizeof dir, "kill");
    fixture_copy("tests/fixtures/h200-4var", dir);
    const char *lib = slow_rename_lib();
    snprintf(args, sizeof args, "report %s -q --format png", dir);
    cr_assert_eq(attnprof(args), EXIT_OK, "%s", err_text);
    int in_commit = 0, rounds = 12;
    for (int r = 0; r < rounds; r++) {
        mark_old(dir);
        pid_t pid = start_report(dir, lib, NULL);
        /* report.html is the last document the render writes: from then on, kills spread
         * over the renames that follow (60 ms each, about 7 of them). */
        char manifest[600];
        snprintf(manifest, sizeof manifest, "%s/.report.tmp-%d/report.html", dir, (int)pid);
        wait_for_path(manifest);
        long us = (long)r * 480000 / rounds;
        struct timespec nap = {us / 1000000, (us % 1000000) * 1000};
        nanosleep(&nap, NULL);
        kill(pid, SIGKILL);
        int st;
        waitpid(pid, &st, 0);
        char probe[600];
        snprintf(probe, sizeof probe, "ls -d %s/.report.old-* >/dev/null 2>&1", dir);
        in_commit += system(probe) == 0;
        int marks = old_marks(dir);
        cr_expect_neq(marks, -1, "round %d (%ld ms): killed, the archive lacks an output", r, us / 1000);
        /* The next run repairs first; this one then fails (no such reference), so what
         * it leaves is the repair: the new report whole, or the old one whole. */
        snprintf(args, sizeof args, "report %s -q --format png --reference %s/none", dir, dir);
        cr_expect_eq(attnprof(args), EXIT_BAD_ARCHIVE, "%s", err_text);
        marks = old_marks(dir);
        cr_expect(marks == 0 || marks == 5, "round %d (%ld ms): after the repair %d of 5 outputs are old", r, us / 1000,
                  marks);
        cr_expect(!leftovers(dir), "round %d: temporaries left", r);
    }
    cr_log_info("%d of %d kills landed inside the commit", in_commit, rounds);
    cr_expect_geq(in_commit, 3, "only %d of %d kills landed inside the commit: the test did not test it", in_commit,
                  rounds);
    unlink(lib);
    remove_tree(dir);
}

Test(hardening_outputs, sigterm_while_rendering_removes_the_temporaries, .timeout = 60)
{
    char dir[256], args[1024];
    tmpdir(dir, sizeof dir, "term");
    fixture_copy("tests/fixtures/h200-4var", dir);
    const char *lib = slow_rename_lib();
    snprintf(args, sizeof args, "report %s -q --format png", dir);
    cr_assert_eq(attnprof(args), EXIT_OK, "%s", err_text);
    for (int sig = 0; sig < 2; sig++) {
        mark_old(dir);
        pid_t pid = start_report(dir, lib, NULL);
        struct timespec nap = {0, 150 * 1000 * 1000}; /* inside the render */
        nanosleep(&nap, NULL);
        kill(pid, sig ? SIGINT : SIGTERM);
        int st;
        waitpid(pid, &st, 0);
        cr_expect(WIFEXITED(st) && WEXITSTATUS(st) == EXIT_INTERRUPTED, "exit %d signal %d", WEXITSTATUS(st),
                  WIFSIGNALED(st) ? WTERMSIG(st) : 0);
        cr_expect(!leftovers(dir), "temporaries left after a signal");
        cr_expect_eq(old_marks(dir), 5, "the old report stays whole");
    }
    unlink(lib);
    remove_tree(dir);
}

Test(hardening_outputs, two_reports_of_one_archive_take_turns, .timeout = 60)
{
    char dir[256];
    tmpdir(dir, sizeof dir, "lock");
    fixture_copy("tests/fixtures/h200-4var", dir);
    const char *lib = slow_rename_lib();
    for (int round = 0; round < 3; round++) {
        pid_t a = start_report(dir, lib, NULL), b = start_report(dir, lib, NULL);
        int sa, sb;
        waitpid(a, &sa, 0);
        waitpid(b, &sb, 0);
        cr_expect(WIFEXITED(sa) && WEXITSTATUS(sa) == 0 && WIFEXITED(sb) && WEXITSTATUS(sb) == 0,
                  "round %d: exit %d and %d", round, WEXITSTATUS(sa), WEXITSTATUS(sb));
        cr_expect_eq(old_marks(dir), 0, "round %d: outputs whole", round);
        cr_expect(!leftovers(dir));
    }
    unlink(lib);
    remove_tree(dir);
}

/* Every process whose command line names `needle` (not this one). */
static int processes_naming(const char *needle)
{
    char cmd[512];
    /* "[a]ttnprof…" matches "attnprof…" but not the shell's own command line, which holds the brackets */
    snprintf(cmd, sizeof cmd, "pgrep -f -- '[%c]%s' | grep -v -x %d | wc -l > /tmp/attnprof-hard-pg-%d", needle[0],
             needle + 1, (int)getpid(), (int)getpid());
    if (system(cmd) != 0)
        return -1;
    snprintf(cmd, sizeof cmd, "/tmp/attnprof-hard-pg-%d", (int)getpid());
    char *t = slurp(cmd);
    int n = t ? atoi(t) : -1;
    free(t);
    unlink(cmd);
    return n;
}

static int chromium_installed(void) { return system("command -v chromium >/dev/null 2>&1") == 0; }

Test(hardening_outputs, chromium_dies_with_a_killed_attnprof_and_its_profile_is_removed, .timeout = 180)
{
    if (!chromium_installed())
        cr_skip_test("Chromium is not installed");
    char dir[256], args[1024], profile_glob[128];
    tmpdir(dir, sizeof dir, "chromium");
    fixture_copy("tests/fixtures/h200-4var", dir);
    snprintf(args, sizeof args, "report %s -q --format png --pdf", dir);
    cr_assert_eq(attnprof(args), EXIT_OK, "%s", err_text);
    pid_t pid = fork();
    cr_assert(pid >= 0);
    if (pid == 0) {
        int nul = open("/dev/null", O_RDWR);
        dup2(nul, 1);
        dup2(nul, 2);
        unsetenv("ATTNPROF_PDF");
        execl(attnprof_bin(), attnprof_bin(), "report", dir, "-q", "--format", "png", "--pdf", (char *)NULL);
        _exit(127);
    }
    snprintf(profile_glob, sizeof profile_glob, "attnprof-chromium-%d-", (int)pid);
    int running = 0;
    struct timespec poll = {0, 50 * 1000 * 1000};
    for (int i = 0; i < 600 && running <= 0; i++) {
        nanosleep(&poll, NULL);
        running = processes_naming(profile_glob);
    }
    cr_assert_gt(running, 0, "Chromium never started");
    struct timespec settle = {0, 300 * 1000 * 1000};
    nanosleep(&settle, NULL);
    kill(pid, SIGKILL);
    waitpid(pid, NULL, 0);
    int left = -1;
    for (int i = 0; i < 40 && left != 0; i++) { /* two seconds at most */
        nanosleep(&poll, NULL);
        left = processes_naming(profile_glob);
    }
    cr_expect_eq(left, 0, "%d Chromium processes outlived the attnprof that started them", left);
    /* The profile a killed attnprof left in /tmp goes with the next print. */
    snprintf(args, sizeof args, "ls -d /tmp/%s* >/dev/null 2>&1", profile_glob);
    int had = system(args) == 0;
    unsetenv("ATTNPROF_PDF");
    snprintf(args, sizeof args, "report %s -q --format png --pdf", dir);
    int rc = attnprof(args);
    setenv("ATTNPROF_PDF", "0", 1);
    cr_expect_eq(rc, EXIT_OK, "%s", err_text);
    snprintf(args, sizeof args, "ls -d /tmp/%s* >/dev/null 2>&1", profile_glob);
    cr_expect(system(args) != 0, "the killed run's Chromium profile is still in /tmp (it was %s)",
              had ? "there" : "not there");
    char pdf[512];
    snprintf(pdf, sizeof pdf, "%s/report.pdf", dir);
    cr_expect(path_exists(pdf));
    remove_tree(dir);
}

/* The end of a PDF: "%%EOF" in its last kilobyte. */
static int pdf_whole(const char *path)
{
    char *t = slurp(path);
    if (!t)
        return 0;
    struct stat st;
    stat(path, &st);
    int ok = st.st_size > 16 && !memcmp(t, "%PDF-", 5);
    int found = 0;
    for (off_t i = st.st_size > 1024 ? st.st_size - 1024 : 0; ok && i + 5 <= st.st_size; i++)
        found |= !memcmp(t + i, "%%EOF", 5);
    free(t);
    return ok && found;
}

/* A real disk that fills up: a tmpfs just big enough for the new report without its PDF
 * (mounting needs root; elsewhere the test says so and is skipped). */
Test(hardening_outputs, a_pdf_that_does_not_fit_is_an_error_and_the_old_one_stays, .timeout = 180)
{
    if (!chromium_installed())
        cr_skip_test("Chromium is not installed");
    char mnt[256], dir[300], cmd[2048];
    tmpdir(mnt, sizeof mnt, "full");
    mkdir(mnt, 0755);
    snprintf(cmd, sizeof cmd, "mount -t tmpfs -o size=64m attnprof-test %s 2>/dev/null", mnt);
    if (system(cmd) != 0) {
        rmdir(mnt);
        cr_skip_test("cannot mount a tmpfs here (needs root): the full-disk case is not tested");
    }
    snprintf(dir, sizeof dir, "%s/a", mnt);
    fixture_copy("tests/fixtures/h200-4var", dir);
    unsetenv("ATTNPROF_PDF");
    snprintf(cmd, sizeof cmd, "report %s -q --format png --pdf", dir);
    int rc = attnprof(cmd);
    cr_assert_eq(rc, EXIT_OK, "%s", err_text);
    char pdf[400];
    snprintf(pdf, sizeof pdf, "%s/report.pdf", dir);
    cr_assert(pdf_whole(pdf), "the first report has its PDF");
    /* Room for the new outputs and the page copy Chromium prints from, not for the PDF. */
    snprintf(cmd, sizeof cmd,
             "used=$(df -k --output=used %s | tail -1) && out=$(du -sk --exclude=report.pdf --exclude=trace.json "
             "--exclude=run.json %s | cut -f1) && html=$(du -k %s/report.html | cut -f1) && mount -o "
             "remount,size=$((used + out + html + 256))k %s",
             mnt, dir, dir, mnt);
    cr_assert_eq(system(cmd), 0, "%s", cmd);
    rc = attnprof((snprintf(cmd, sizeof cmd, "report %s -q --format png --pdf", dir), cmd));
    setenv("ATTNPROF_PDF", "0", 1);
    cr_expect(rc != EXIT_OK, "report.pdf did not fit and the report exited 0");
    cr_expect(rc == EXIT_IO, "exit %d: %s", rc, err_text);
    assert_one_line("a full disk");
    cr_expect(strstr(err_text, "report.pdf") != NULL, "the line names report.pdf: %s", err_text);
    cr_expect(pdf_whole(pdf), "the old report.pdf is gone or cut");
    snprintf(cmd, sizeof cmd, "umount %s", mnt);
    system(cmd);
    rmdir(mnt);
}

/* ---- out of memory, unreadable files ------------------------------------------- */

/* The library a crash report's first frame past the signal handler names (the frame after
 * libc's signal trampoline), when it is a system library and not attnprof itself; NULL
 * otherwise. Under RLIMIT_AS, fontconfig and cairo (a pixman image it did not check) crash in
 * paths that do not check their own allocations: the limit SECURITY.md states. */
static const char *crashed_in_library(const char *report)
{
    static char lib[64];
    const char *trampoline = strstr(report, "crashed (signal 11)") ? strstr(report, "libc.so.6(") : NULL;
    const char *line = trampoline ? strchr(trampoline, '\n') : NULL;
    if (!line)
        return NULL;
    line++; /* "/lib/x86_64-linux-gnu/libpixman-1.so.0(pixman_…+0x0)[0x…]" */
    size_t path_len = strcspn(line, "(\n");
    const char *base = line;
    for (size_t i = 0; i < path_len; i++)
        if (line[i] == '/')
            base = line + i + 1;
    snprintf(lib, sizeof lib, "%.*s", (int)(line + path_len - base), base);
    if (strncmp(lib, "lib", 3) || !strncmp(lib, "libattnprof", 11) || !strncmp(lib, "libc.so", 7))
        return NULL; /* attnprof itself (its executable or its recorder), or libc called by it */
    return lib;
}

Test(hardening_memory, out_of_memory_is_one_line_and_exit_9, .timeout = 120)
{
    SKIP_UNDER_ASAN();
    char dir[256];
    tmpdir(dir, sizeof dir, "oom");
    fixture_copy("tests/fixtures/h200-4var", dir);
    int oom = 0, ok = 0, library_crash = 0;
    for (int mb = 16; mb <= 72; mb += 2) {
        char errf[] = "/tmp/attnprof-hard-oom-XXXXXX";
        int efd = mkstemp(errf);
        pid_t pid = fork();
        cr_assert(pid >= 0);
        if (pid == 0) {
            struct rlimit lim = {(rlim_t)mb << 20, (rlim_t)mb << 20};
            setrlimit(RLIMIT_AS, &lim);
            int nul = open("/dev/null", O_RDWR);
            dup2(nul, 1);
            dup2(efd, 2);
            execl(attnprof_bin(), attnprof_bin(), "report", dir, "-q", "--format", "png", (char *)NULL);
            _exit(127);
        }
        close(efd);
        int st;
        waitpid(pid, &st, 0);
        read_into(errf, err_text, sizeof err_text);
        unlink(errf);
        cr_expect(!(WIFSIGNALED(st) && WTERMSIG(st) == SIGABRT) && !strstr(err_text, "signal 6"),
                  "%d MB: a bare abort: %s", mb, err_text);
        int rc = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
        if (strstr(err_text, "out of memory") || strstr(err_text, "Cannot allocate")) {
            cr_expect_eq(rc, EXIT_NO_MEMORY, "%d MB: out of memory with exit %d: %s", mb, rc, err_text);
            assert_one_line("out of memory");
        }
        const char *lib = rc == 139 ? crashed_in_library(err_text) : NULL;
        if (lib) {
            library_crash++; /* fontconfig, cairo/pixman: not every path checks its malloc (SECURITY.md) */
            cr_log_info("%d MB: crashed inside %s, not in attnprof", mb, lib);
        }
        else if (rc != 127) /* 127: the loader could not map a library: attnprof never started */
            cr_expect(rc == EXIT_OK || rc == EXIT_NO_MEMORY, "%d MB: exit %d: %s", mb, rc, err_text);
        oom += rc == EXIT_NO_MEMORY;
        ok += rc == EXIT_OK;
        cr_expect(!leftovers(dir), "%d MB: temporaries left", mb);
    }
    cr_log_info("RLIMIT_AS 16..72 MB: %d exit 9, %d rendered, %d crashes inside a system library", oom, ok,
                library_crash);
    cr_expect_gt(oom, 0, "no limit ran out of memory: the test did not test it");
    cr_expect_gt(ok, 0, "no limit was enough to render");
    remove_tree(dir);
}

Test(hardening_memory, attn_oom_removes_the_registered_temporaries)
{
    SKIP_UNDER_ASAN();
    char dir[256];
    tmpdir(dir, sizeof dir, "oomtmp");
    mkdir(dir, 0755);
    char inner[300];
    snprintf(inner, sizeof inner, "%s/figures", dir);
    mkdir(inner, 0755);
    write_text((snprintf(inner, sizeof inner, "%s/figures/a.png", dir), inner), "x");
    pid_t pid = fork();
    cr_assert(pid >= 0);
    if (pid == 0) {
        int nul = open("/dev/null", O_RDWR);
        dup2(nul, 2);
        cleanup_add_path(dir);
        struct rlimit lim = {256 << 20, 256 << 20};
        setrlimit(RLIMIT_AS, &lim);
        void *p = attn_malloc((size_t)1 << 40);
        _exit(p ? 0 : 1);
    }
    int st;
    waitpid(pid, &st, 0);
    cr_expect(WIFEXITED(st) && WEXITSTATUS(st) == EXIT_NO_MEMORY, "exit %d", WEXITSTATUS(st));
    cr_expect(!path_exists(dir), "the registered temporary stayed");
    remove_tree(dir);
}

Test(hardening_files, an_unreadable_run_json_is_called_unreadable)
{
    char dir[256];
    tmpdir(dir, sizeof dir, "perm");
    fixture_copy("tests/fixtures/h200-4var", dir);
    chmod(dir, 0755);
    char path[300];
    snprintf(path, sizeof path, "%s/run.json", dir);
    chmod(path, 0);
    int pfd[2];
    cr_assert_eq(pipe(pfd), 0);
    pid_t pid = fork();
    cr_assert(pid >= 0);
    if (pid == 0) {
        /* root reads anything: the check runs as nobody */
        if (geteuid() == 0 && (setgid(65534) != 0 || setuid(65534) != 0))
            _exit(2);
        static trace t;
        static run_info r;
        char err[1024] = "";
        int rc = archive_read(dir, &t, &r, err, sizeof err);
        dprintf(pfd[1], "%d %s", rc, err);
        _exit(0);
    }
    close(pfd[1]);
    char got[1200] = "";
    ssize_t n = read(pfd[0], got, sizeof got - 1);
    got[n > 0 ? n : 0] = '\0';
    close(pfd[0]);
    waitpid(pid, NULL, 0);
    cr_expect(!strncmp(got, "6 ", 2), "%s", got); /* EXIT_BAD_ARCHIVE */
    cr_expect(strstr(got, "unreadable") && strstr(got, "Permission denied") && !strstr(got, "JSON"), "%s", got);
    chmod(path, 0644);
    remove_tree(dir);
}

/* compare and sweep --collect: a signal removes their temporaries; a SIGKILL during
 * compare --force's swap leaves the old comparison or the new one, and the next compare
 * removes what the killed one left. */
Test(hardening_outputs, compare_and_collect_leave_no_temporaries, .timeout = 180)
{
    char dir[256], a[300], b[300], c[300], args[2048];
    tmpdir(dir, sizeof dir, "cmpkill");
    snprintf(a, sizeof a, "%s/A", dir);
    snprintf(b, sizeof b, "%s/B", dir);
    snprintf(c, sizeof c, "%s/C", dir);
    fixture_copy("tests/fixtures/h200-4var", a);
    fixture_copy("tests/fixtures/h200-4var", b);
    const char *lib = slow_rename_lib();
    snprintf(args, sizeof args, "compare %s %s -o %s -q", a, b, c);
    cr_assert_eq(attnprof(args), EXIT_OK, "%s", err_text);
    char leftover_cmd[600], md[400];
    snprintf(leftover_cmd, sizeof leftover_cmd, "ls -A %s | grep -q -e tmp- -e old-", dir);
    snprintf(md, sizeof md, "%s/compare.md", c);
    int rounds = 10;
    for (int r = 0; r <= rounds; r++) {
        const char *const argv[] = {"compare", a, b, "-o", c, "--force", "-q", NULL};
        pid_t pid = spawn_attnprof(lib, "60", argv);
        /* The last document written into the new folder is compare.tex: from then on the swap. */
        char tex[600];
        snprintf(tex, sizeof tex, "%s/.C.tmp-%d/compare.tex", dir, (int)pid);
        wait_for_path(tex);
        long us = (long)r * 150000 / rounds;
        struct timespec nap = {0, us * 1000};
        nanosleep(&nap, NULL);
        kill(pid, r == rounds ? SIGTERM : SIGKILL);
        int st;
        waitpid(pid, &st, 0);
        cr_expect(path_exists(md), "round %d (%ld ms): the comparison is gone after a kill during its swap", r,
                  us / 1000);
        if (r == rounds) {
            cr_expect(WIFEXITED(st) && (WEXITSTATUS(st) == EXIT_INTERRUPTED || WEXITSTATUS(st) == EXIT_OK),
                      "SIGTERM: exit %d", WEXITSTATUS(st));
            cr_expect(system(leftover_cmd) != 0, "SIGTERM: temporaries left");
        }
        /* The next compare of the same -o removes what the killed one left. */
        snprintf(args, sizeof args, "compare %s %s -o %s --force -q", a, b, c);
        cr_expect_eq(attnprof(args), EXIT_OK, "%s", err_text);
        cr_expect(system(leftover_cmd) != 0, "round %d: temporaries left after the next compare", r);
    }
    /* sweep --collect, stopped by SIGTERM while it renders. */
    char sweep[300];
    snprintf(sweep, sizeof sweep, "%s/S", dir);
    snprintf(args, sizeof args, "mkdir -p %s/shapes && cp -r %s %s/shapes/8x16x1024x64", sweep, a, sweep);
    sh(args);
    const char *const argv[] = {"sweep", "--collect", sweep, NULL};
    pid_t pid = spawn_attnprof(lib, NULL, argv);
    char tmp[600];
    snprintf(tmp, sizeof tmp, "%s/.sweep-report.tmp-%d", sweep, (int)pid);
    wait_for_path(tmp);
    kill(pid, SIGTERM);
    int st;
    waitpid(pid, &st, 0);
    cr_expect(WIFEXITED(st) && WEXITSTATUS(st) == EXIT_INTERRUPTED, "sweep --collect: exit %d signal %d",
              WEXITSTATUS(st), WIFSIGNALED(st) ? WTERMSIG(st) : 0);
    cr_expect(!path_exists(tmp), "sweep --collect left its staging folder");
    unlink(lib);
    remove_tree(dir);
}

/* sweep --collect's documents go through the document pipeline's commit beside the shapes
 * (doc_bundle.c): a SIGKILL anywhere in its final renames leaves every document, old or new,
 * and the next --collect finishes or removes what it left. */
Test(hardening_outputs, a_kill_during_the_sweeps_renames_leaves_every_document, .timeout = 240)
{
    static const char *const docs[] = {"sweep.md", "sweep.html", "sweep.csv", "sweep.tex", "figures/sweep-time.svg"};
    char dir[256], sweep[300], args[2048], path[600];
    tmpdir(dir, sizeof dir, "sweepkill");
    snprintf(sweep, sizeof sweep, "%s/S", dir);
    snprintf(args, sizeof args, "mkdir -p %s/shapes && cp -r tests/fixtures/h200-4var %s/shapes/2x4x256x64", sweep,
             sweep);
    sh(args);
    snprintf(args, sizeof args, "sweep --collect %s", sweep);
    cr_assert_eq(attnprof(args), EXIT_OK, "%s", err_text);
    const char *lib = slow_rename_lib();
    int in_commit = 0, rounds = 8;
    for (int r = 0; r < rounds; r++) {
        snprintf(args, sizeof args, "cd %s && for f in sweep.md sweep.html sweep.csv sweep.tex figures/sweep-time.svg; do "
                 "echo OLD-OUTPUT >> $f; done", sweep);
        sh(args);
        const char *const argv[] = {"sweep", "--collect", sweep, NULL};
        pid_t pid = spawn_attnprof(lib, "60", argv);
        /* sweep.tex is the last document the render writes: from then on, the commit. */
        char last[700];
        snprintf(last, sizeof last, "%s/.sweep-report.tmp-%d/sweep.tex", sweep, (int)pid);
        wait_for_path(last);
        long us = (long)r * 360000 / rounds;
        struct timespec nap = {0, us * 1000};
        nanosleep(&nap, NULL);
        kill(pid, SIGKILL);
        int st;
        waitpid(pid, &st, 0);
        snprintf(args, sizeof args, "ls -d %s/.sweep-report.old-* >/dev/null 2>&1", sweep);
        in_commit += system(args) == 0;
        for (int d = 0; d < 4; d++) {
            snprintf(path, sizeof path, "%s/%s", sweep, docs[d]);
            cr_expect(path_exists(path), "round %d (%ld ms): killed, %s is missing", r, us / 1000, docs[d]);
        }
        snprintf(path, sizeof path, "%s/figures", sweep);
        cr_expect(path_exists(path), "round %d: killed, figures/ is missing", r);
        /* The next collect repairs first, then writes the documents anew: none old, none left over. */
        snprintf(args, sizeof args, "sweep --collect %s", sweep);
        cr_expect_eq(attnprof(args), EXIT_OK, "%s", err_text);
        for (int d = 0; d < 5; d++) {
            snprintf(path, sizeof path, "%s/%s", sweep, docs[d]);
            char *t = slurp(path);
            cr_expect(t && !strstr(t, "OLD-OUTPUT"), "round %d: %s is old after the next collect", r, docs[d]);
            free(t);
        }
        snprintf(args, sizeof args, "ls -A %s | grep -e tmp- -e old-", sweep);
        char left[512] = "";
        FILE *ls = popen(args, "r");
        size_t got = ls ? fread(left, 1, sizeof left - 1, ls) : 0;
        left[got] = '\0';
        if (ls)
            pclose(ls);
        cr_expect(!left[0], "round %d: temporaries left after the next collect: %s", r, left);
    }
    cr_log_info("%d of %d kills landed inside the commit", in_commit, rounds);
    cr_expect_geq(in_commit, 2, "only %d of %d kills landed inside the commit: the test did not test it", in_commit,
                  rounds);
    unlink(lib);
    remove_tree(dir);
}

Test(hardening_sweep, a_status_file_out_of_range_is_not_believed)
{
    char dir[256], path[512], args[1024], out[8192];
    tmpdir(dir, sizeof dir, "status");
    planned_sweep(dir, NULL);
    const char *bad[] = {"{\"exit_code\": 99999}", "{\"exit_code\": -3}", "{\"exit_code\": 1, \"log\": \"../../etc/passwd\"}",
                         "{\"exit_code\": 1, \"slurm_task\": \"7\"}"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        snprintf(path, sizeof path, "%s/status", dir);
        mkdir(path, 0755);
        snprintf(path, sizeof path, "%s/status/4x4x256x64.json", dir);
        write_text(path, bad[i]);
        snprintf(args, sizeof args, "sweep --collect %s", dir);
        cr_expect_eq(attnprof_out(args, out, sizeof out), EXIT_VARIANT_FAILED, "%s", err_text);
        cr_expect(strstr(out, "1 unreadable (of 1)") && strstr(out, "out of range"), "%s: %s", bad[i], out);
    }
    remove_tree(dir);
}
