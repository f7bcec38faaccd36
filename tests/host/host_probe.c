/* gz-host-probe: a program that probes a feature the device may lack and
 * goes on without it, as engines do (try a device with it; on
 * VK_ERROR_FEATURE_NOT_PRESENT, make one without).
 *
 *   gz-host-probe [--api10] [--no-probe] [--rounds N] [--exit-without-atexit]
 *
 * Asks for sparseBinding (lavapipe has none), prints the VkResult, then
 * makes a plain device and submits N (default 3) labelled fills. --api10:
 * a Vulkan 1.0 instance without VK_KHR_get_physical_device_properties2 (a
 * layer must not enable device extensions that depend on it). --no-probe:
 * the plain device only. Prints, on
 * stdout, what a run without gpuzones must print the same: the probe's
 * result, the work done, and what the validation layer said (when
 * GZ_HOST_LAYERS enables it). --exit-without-atexit: ends with _exit(0)
 * after destroying the device and the instance, as Go's exit does (no
 * atexit, no library destructors). */
#include <unistd.h>

#include "host_vk.h"

int main(int argc, char **argv)
{
    uint32_t api = VK_API_VERSION_1_3;
    int rounds = 3;
    int quick_exit = 0, probe_sparse = 1;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--no-probe"))
            probe_sparse = 0;
        else if (!strcmp(argv[i], "--exit-without-atexit"))
            quick_exit = 1;
        else if (!strcmp(argv[i], "--api10"))
            api = VK_API_VERSION_1_0;
        else if (!strcmp(argv[i], "--rounds") && i + 1 < argc)
            rounds = atoi(argv[++i]);
    }
    host_vk v = {0};
    host_vk_instance(&v, api);
    if (probe_sparse) {
        VkPhysicalDeviceFeatures sparse = {.sparseBinding = VK_TRUE};
        VkDevice probe = VK_NULL_HANDLE;
        VkResult r = host_vk_try_device(&v, &sparse, &probe);
        printf("sparseBinding: VkResult %d\n", (int)r);
        if (r == VK_SUCCESS)
            vkDestroyDevice(probe, NULL);
    }
    host_vk_device(&v);
    for (int i = 0; i < rounds; i++)
        host_vk_work(&v);
    printf("work: %d submissions\n", rounds);
    host_vk_close(&v);
    printf("validation layer: %s; warnings and errors reported: %d\n",
           host_vk_validation_active ? "active" : "not loaded", host_vk_complaints);
    if (quick_exit) {
        fflush(stdout);
        _exit(0);
    }
    return 0;
}
