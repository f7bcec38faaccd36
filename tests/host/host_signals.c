/* gz-host-signals: a Vulkan program that sets up SIGINT and SIGTERM one of
 * the ways programs do, before it creates its instance, then submits work
 * until a signal comes or its time is up.
 *
 *   gz-host-signals SETUP [--seconds S]
 *
 * SETUP:
 *   default          left as the program started (SIG_DFL)
 *   siginfo-default  SIG_DFL set with SA_SIGINFO | SA_RESTART and a mask
 *                    (a struct sigaction reused after a handler's)
 *   siginfo-ignore   SIG_IGN set with SA_SIGINFO and a mask
 *   onstack          its own handler, SA_SIGINFO | SA_ONSTACK, on a
 *                    sigaltstack; the handler notes whether it runs on it
 *   resethand        its own handler with SA_RESETHAND: after it ran once,
 *                    the program raises the signal again, which now ends it
 *   mask             its own handler with sa_mask {SIGUSR1, SIGQUIT}; the
 *                    handler notes whether SIGUSR1 is blocked while it runs
 *
 * Prints (stdout) what sigaction() reads back for both signals before and
 * after the instance is created, "ready" once it submits, and what its
 * handler saw. Exits 3 after its own handler ran, 0 when no signal came
 * within S seconds (default 20), else as the signal's action decides. */
#define _GNU_SOURCE
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <time.h>
#include <unistd.h>

#include "host_vk.h"

static volatile sig_atomic_t got, on_stack = -1, mask_held = -1;
static char altstack[1 << 16];

static void note(int sig)
{
    if (!got)
        got = sig;
}

static void on_signal_info(int sig, siginfo_t *info, void *ctx)
{
    (void)info;
    (void)ctx;
    char local;
    on_stack = &local >= altstack && &local < altstack + sizeof altstack;
    note(sig);
}

static void on_signal(int sig)
{
    sigset_t now;
    pthread_sigmask(SIG_BLOCK, NULL, &now);
    mask_held = sigismember(&now, SIGUSR1) == 1;
    note(sig);
}

static void set_up(const char *setup, int sig)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sigemptyset(&sa.sa_mask);
    if (!strcmp(setup, "default")) {
        return;
    } else if (!strcmp(setup, "siginfo-default")) {
        sa.sa_sigaction = NULL; /* SIG_DFL */
        sa.sa_flags = SA_SIGINFO | SA_RESTART;
        sigaddset(&sa.sa_mask, SIGUSR1);
    } else if (!strcmp(setup, "siginfo-ignore")) {
        sa.sa_handler = SIG_IGN;
        sa.sa_flags = SA_SIGINFO;
        sigaddset(&sa.sa_mask, SIGUSR2);
    } else if (!strcmp(setup, "onstack")) {
        stack_t ss = {.ss_sp = altstack, .ss_size = sizeof altstack};
        if (sigaltstack(&ss, NULL) != 0)
            exit(71);
        sa.sa_sigaction = on_signal_info;
        sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
    } else if (!strcmp(setup, "resethand")) {
        sa.sa_handler = on_signal;
        sa.sa_flags = SA_RESETHAND;
    } else if (!strcmp(setup, "mask")) {
        sa.sa_handler = on_signal;
        sigaddset(&sa.sa_mask, SIGUSR1);
        sigaddset(&sa.sa_mask, SIGQUIT);
    } else {
        fprintf(stderr, "unknown setup %s\n", setup);
        exit(64);
    }
    if (sigaction(sig, &sa, NULL) != 0)
        exit(71);
}

static void print_action(const char *when, const char *name, int sig)
{
    struct sigaction sa;
    sigaction(sig, NULL, &sa);
    const char *kind = sa.sa_handler == SIG_DFL   ? "default"
                       : sa.sa_handler == SIG_IGN ? "ignore"
                       : (sa.sa_flags & SA_SIGINFO)
                           ? (sa.sa_sigaction == on_signal_info ? "own" : "other")
                           : (sa.sa_handler == on_signal ? "own" : "other");
    static const struct {
        int flag;
        const char *name;
    } flags[] = {{SA_SIGINFO, "SIGINFO"},     {SA_ONSTACK, "ONSTACK"}, {SA_RESETHAND, "RESETHAND"},
                 {SA_RESTART, "RESTART"},     {SA_NODEFER, "NODEFER"}};
    static const struct {
        int sig;
        const char *name;
    } sigs[] = {{SIGUSR1, "USR1"}, {SIGUSR2, "USR2"}, {SIGQUIT, "QUIT"},
                {SIGINT, "INT"},   {SIGTERM, "TERM"}, {SIGHUP, "HUP"}};
    printf("%s %s: %s flags", when, name, kind);
    for (size_t i = 0; i < sizeof flags / sizeof flags[0]; i++)
        if (sa.sa_flags & flags[i].flag)
            printf(" %s", flags[i].name);
    printf(" mask");
    for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++)
        if (sigismember(&sa.sa_mask, sigs[i].sig) == 1)
            printf(" %s", sigs[i].name);
    printf("\n");
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: gz-host-signals SETUP [--seconds S]\n");
        return 64;
    }
    const char *setup = argv[1];
    int seconds = argc > 3 && !strcmp(argv[2], "--seconds") ? atoi(argv[3]) : 20;
    set_up(setup, SIGINT);
    set_up(setup, SIGTERM);
    print_action("before", "SIGINT", SIGINT);
    print_action("before", "SIGTERM", SIGTERM);
    host_vk v = {0};
    host_vk_instance(&v, VK_API_VERSION_1_3);
    host_vk_device(&v);
    print_action("after", "SIGINT", SIGINT);
    print_action("after", "SIGTERM", SIGTERM);
    printf("ready\n");
    fflush(stdout);
    struct timespec start, now;
    clock_gettime(CLOCK_MONOTONIC, &start);
    for (;;) {
        host_vk_work(&v);
        if (got) {
            printf("handled %s", got == SIGINT ? "SIGINT" : "SIGTERM");
            if (on_stack >= 0)
                printf(", on the signal stack: %s", on_stack ? "yes" : "no");
            if (mask_held >= 0)
                printf(", SIGUSR1 blocked in the handler: %s", mask_held ? "yes" : "no");
            printf("\n");
            print_action("then", got == SIGINT ? "SIGINT" : "SIGTERM", got);
            fflush(stdout);
            if (!strcmp(setup, "resethand"))
                raise(got); /* the action is the default again: it ends the program */
            host_vk_close(&v);
            return 3;
        }
        clock_gettime(CLOCK_MONOTONIC, &now);
        if (now.tv_sec - start.tv_sec >= seconds)
            break;
    }
    host_vk_close(&v);
    printf("done: no signal ended the program\n");
    return 0;
}
