/* nicemu: parse the configuration, build the machine, run it, report. */
#include <glib.h>
#include <stdio.h>
#include <stdlib.h>

#include "emu/config.h"
#include "emu/machine.h"

static int config_error(GError *err)
{
    fprintf(stderr, "nicemu: error: %s\n", err->message);
    g_error_free(err);
    return 2;
}

int main(int argc, char **argv)
{
    nm_config *cfg = nm_config_new();
    GError *err = NULL;
    bool exit_now;
    if (!nm_config_parse_args(cfg, &argc, &argv, &exit_now, &err)) {
        nm_config_free(cfg);
        return config_error(err);
    }
    if (exit_now) {
        nm_config_free(cfg);
        return 0;
    }
    nm_machine *m = nm_machine_new(cfg, &err);
    if (!m) {
        nm_config_free(cfg);
        return config_error(err);
    }
    int status = 0;
    if (!cfg->kernel && !cfg->rom) {
        fprintf(stderr, "nicemu: error: nothing to run: give --kernel FILE or --rom FILE\n");
        status = 2;
    } else {
        fprintf(stderr, "nicemu: error: this build has no CPU yet\n");
        status = 1;
    }
    nm_machine_free(m);
    nm_config_free(cfg);
    return status;
}
