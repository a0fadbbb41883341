/* The machine core: devices, pollers, the A20 gate, stopping (machine.h). */
#include "emu/core/machine.h"

#include <string.h>

const char *nm_stop_reason_name(nm_stop_reason why)
{
    static const char *const names[] = {
        [NM_STOP_NONE] = "running",
        [NM_STOP_EXIT_PORT] = "exit-port",
        [NM_STOP_HALT] = "halt",
        [NM_STOP_RESET] = "reset",
        [NM_STOP_MAX_INSTRUCTIONS] = "max-instructions",
        [NM_STOP_MAX_TIME] = "max-virtual-time",
        [NM_STOP_SIGNAL] = "signal",
        [NM_STOP_ERROR] = "error",
        [NM_STOP_PANIC] = "guest-panic",
        [NM_STOP_SAVED] = "saved",
    };
    return why < G_N_ELEMENTS(names) ? names[why] : "?";
}

void *nm_machine_add_device(nm_machine *m, const nm_device_class *cls, const nm_devcfg *cfg,
                            GError **err)
{
    void *state = cls->create(m, cfg, err);
    if (!state) return NULL;
    nm_device_instance *inst = g_new0(nm_device_instance, 1);
    inst->cls = cls;
    inst->state = state;
    inst->name = g_strdup(cfg && cfg->name ? cfg->name : cls->name);
    g_ptr_array_add(m->devices, inst);
    return state;
}

void nm_machine_add_poller(nm_machine *m, void (*fn)(void *opaque), void *opaque)
{
    nm_machine_poller p = {fn, opaque};
    g_array_append_val(m->pollers, p);
}

void nm_machine_reset(nm_machine *m)
{
    for (guint i = 0; i < m->devices->len; i++) {
        nm_device_instance *inst = m->devices->pdata[i];
        if (inst->cls->reset) inst->cls->reset(inst->state);
    }
}

void nm_machine_set_a20(nm_machine *m, bool enabled)
{
    if (m->a20 == enabled) return;
    m->a20 = enabled;
    if (m->a20_listener) m->a20_listener(m->a20_listener_opaque, enabled);
}

void nm_machine_request_stop(nm_machine *m, nm_stop_reason why, int exit_status, const char *detail)
{
    if (m->stop_requested == NM_STOP_REQUESTED) return;
    m->stop_reason = why;
    m->exit_status = exit_status;
    g_free(m->stop_detail); /* a caller may clear stop_requested and run on */
    m->stop_detail = g_strdup(detail);
    m->stop_requested = NM_STOP_REQUESTED;
}

void nm_machine_snapshot_point(nm_machine *m)
{
    m->snapshot_points++;
    m->snapshot_pending = true;
    /* Only a break: a stop already requested stays one. */
    __sync_bool_compare_and_swap(&m->stop_requested, 0, NM_BREAK_REQUESTED);
}
