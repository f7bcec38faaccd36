/* gz-host-exit-race: one thread calls exit() while a stop signal arrives,
 * with a third thread submitting Vulkan work all along.
 *
 *   gz-host-exit-race
 *
 * The submitting thread runs; once it has submitted a few times, one
 * thread calls exit(3) at the moment the main thread sends the process
 * SIGTERM (left at its default action). Without gpuzones the process ends
 * with either (status 3, or death by SIGTERM); with gpuzones the same, and
 * whichever wins, the trace must be whole. */
#define _GNU_SOURCE
#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include "host_vk.h"

static host_vk v;
static int submitted; /* atomic */
static pthread_barrier_t together;

static void *submit_loop(void *arg)
{
    (void)arg;
    for (;;) {
        host_vk_work(&v);
        __atomic_add_fetch(&submitted, 1, __ATOMIC_RELEASE);
    }
    return NULL;
}

static void *exiter(void *arg)
{
    (void)arg;
    pthread_barrier_wait(&together);
    exit(3);
}

int main(void)
{
    host_vk_instance(&v, VK_API_VERSION_1_3);
    host_vk_device(&v);
    pthread_barrier_init(&together, NULL, 2);
    pthread_t worker, ender;
    if (pthread_create(&worker, NULL, submit_loop, NULL) != 0 ||
        pthread_create(&ender, NULL, exiter, NULL) != 0)
        return 71;
    while (__atomic_load_n(&submitted, __ATOMIC_ACQUIRE) < 20)
        usleep(1000);
    printf("racing\n");
    fflush(stdout);
    pthread_barrier_wait(&together);
    kill(getpid(), SIGTERM);
    for (;;)
        pause();
}
