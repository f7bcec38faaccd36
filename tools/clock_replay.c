/* gz-clock-replay RECORD [--check]: feeds a GPUZONES_CLOCK_RECORD record
 * (client/gz_clock_record.h) through this build's clock model, one model
 * per recorded clock, in the order recorded.
 *
 * Without --check, one line per conversion the run made:
 *   <host recorded> <host now> <doubt now>
 * so that a run's trace can be re-evaluated with a changed model
 * (tests/clock/replay.py). With --check, the number of conversions that
 * came out different; exit 1 where any did (the model, or the record, is
 * not what the run had). Exit 2 for a record it cannot read. */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gz_calibration.h"

/* One model per recorded clock id (1, 2, ...: a program may make many
 * devices), grown as ids come. The record numbers its clocks in turn: an
 * id past MAX_CLOCK is a damaged line (2^31 once wrapped the growth). */
#define MAX_CLOCK (1u << 20)
static gz_clock_model **models;
static size_t nmodels;

static int bad(const char *path, unsigned long line, const char *why)
{
    fprintf(stderr, "gz-clock-replay: %s:%lu: %s\n", path, line, why);
    return 2;
}

int main(int argc, char **argv)
{
    bool check = argc == 3 && !strcmp(argv[2], "--check");
    if (argc != 2 && !check) {
        fprintf(stderr, "usage: gz-clock-replay RECORD [--check]\n");
        return 2;
    }
    FILE *f = fopen(argv[1], "r");
    if (!f) {
        perror(argv[1]);
        return 2;
    }
    char text[256];
    unsigned long line = 0, conversions = 0, differ = 0;
    while (fgets(text, sizeof text, f)) {
        line++;
        unsigned id;
        unsigned long long a, b, c, d;
        int method, n;
        if (sscanf(text + 1, " %u%n", &id, &n) != 1 || !id || id > MAX_CLOCK)
            return bad(argv[1], line, "no clock id in 1..1048576");
        if (text[0] == 'C') {
            if (id >= nmodels) {
                size_t grown = (size_t)id * 2;
                gz_clock_model **more = realloc(models, grown * sizeof *models);
                if (!more)
                    return bad(argv[1], line, "out of memory");
                memset(more + nmodels, 0, (grown - nmodels) * sizeof *more);
                models = more;
                nmodels = grown;
            }
            free(models[id]);
            models[id] = malloc(sizeof *models[id]);
            if (!models[id])
                return bad(argv[1], line, "out of memory");
            gz_model_init(models[id]);
            continue;
        }
        gz_clock_model *m = id < nmodels ? models[id] : NULL;
        if (!m)
            return bad(argv[1], line, "a clock used before its C line");
        const char *rest = text + 1 + n;
        switch (text[0]) {
        case 'P':
            if (sscanf(rest, "%d %llu %llu %llu", &method, &a, &b, &c) != 4)
                return bad(argv[1], line, "P needs method gpu host deviation");
            gz_model_add_pair(m, (gz_calib_method)method,
                              &(gz_calib_pair){.gpu_ns = a, .host_ns = b, .deviation_ns = c});
            break;
        case 'B':
            if (sscanf(rest, "%llu %llu %llu %llu", &a, &b, &c, &d) != 4)
                return bad(argv[1], line, "B needs four times");
            gz_model_add_bounds(m, a, b, c, d);
            break;
        case 'Z':
            if (sscanf(rest, "%llu %llu %llu", &a, &b, &c) != 3)
                return bad(argv[1], line, "Z needs begin end work id");
            gz_model_add_zone(m, a, b, (uint32_t)c);
            break;
        case 'F':
            gz_model_fit(m);
            break;
        case 'H': {
            if (sscanf(rest, "%llu %llu", &a, &b) != 2)
                return bad(argv[1], line, "H needs gpu host");
            uint64_t host = gz_model_to_host(m, a);
            conversions++;
            differ += host != b;
            if (!check)
                printf("%llu %llu %llu\n", b, (unsigned long long)host,
                       (unsigned long long)gz_model_doubt_ns(m, a));
            break;
        }
        default:
            return bad(argv[1], line, "not a record line (C, P, B, Z, F, H)");
        }
    }
    fclose(f);
    for (size_t i = 0; i < nmodels; i++)
        free(models[i]);
    free(models);
    if (check)
        printf("gz-clock-replay: %lu conversions, %lu differ\n", conversions, differ);
    return check && differ ? 1 : 0;
}
