#include "emu/machine.h"

#include <string.h>

#include "cpu/cpu.h"
#include "emu/core/log.h"
#include "emu/run.h"
#include "emu/snapshot.h"

nm_machine *nm_machine_new_bare(const nm_config *cfg, GError **err)
{
    const nm_cpu_model *model = nm_cpu_model_find(cfg->cpu);
    if (!model) {
        g_set_error(err, NM_CONFIG_ERROR, NM_CONFIG_ERROR_VALUE,
                    "cpu: bad value '%s' (accepted: %s)", cfg->cpu, nm_cpu_model_names());
        return NULL;
    }
    /* --fpu: only a 386 takes a coprocessor; the others' x87 is what the
     * part is (on chip in the DX and the Pentium, none in the SX). */
    bool fpu387 = cfg->fpu && !strcmp(cfg->fpu, "387");
    if (cfg->fpu && model->family != NM_CPU_386 && (fpu387 || model->fpu != NM_FPU_NONE)) {
        g_set_error(err, NM_CONFIG_ERROR, NM_CONFIG_ERROR_VALUE,
                    "fpu: bad value '%s' for %s (only a 386 model takes a 387; the %s has %s)",
                    cfg->fpu, model->name, model->name,
                    model->fpu == NM_FPU_NONE ? "no FPU" : "its FPU on chip");
        return NULL;
    }
    nm_machine *m = g_new0(nm_machine, 1);
    m->cfg = cfg;
    if (cfg->cpu_mhz || (fpu387 && model->family == NM_CPU_386)) {
        /* a copy of the model: at a hypothetical clock (--mhz), with a 387 */
        m->model_at_mhz = g_new(nm_cpu_model, 1);
        *m->model_at_mhz = *model;
        if (cfg->cpu_mhz && !nm_cpu_model_at_mhz(model, cfg->cpu_mhz, m->model_at_mhz)) {
            g_set_error(err, NM_CONFIG_ERROR, NM_CONFIG_ERROR_VALUE,
                        "mhz: bad value '%u' (accepted: %u to %u)", cfg->cpu_mhz, NM_CPU_MHZ_MIN,
                        NM_CPU_MHZ_MAX);
            g_free(m->model_at_mhz);
            g_free(m);
            return NULL;
        }
        if (fpu387) m->model_at_mhz->fpu = NM_FPU_387;
        model = m->model_at_mhz;
    }
    m->model = model;
    m->settings = (nm_machine_settings){
        .ram_bytes = cfg->ram_bytes,
        .rtc_epoch = cfg->rtc_epoch,
        .post_port = cfg->post_port,
        .strict_isa = cfg->strict_isa,
        .poll_fast_forward = !cfg->no_poll_fast_forward,
        .mailbox = cfg->mailbox,
    };
    nm_clock_init(&m->clock, model->hz_num, model->hz_den);
    nm_timer_init(&m->max_time, nm_run_on_max_time, m, "max-virtual-time");
    m->mem = nm_memmap_new(&m->clock);
    m->io = nm_ioport_new(&m->clock);
    nm_irq_init(&m->irq);
    m->irq.share_ok = cfg->share_irqs;
    m->a20 = true; /* the boot ROM may close it; Linux expects it open */
    m->devices = g_ptr_array_new();
    m->pollers = g_array_new(FALSE, FALSE, sizeof(nm_machine_poller));
    m->ram = nm_memmap_add_ram(m->mem, "ram", 0, (uint32_t)cfg->ram_bytes);
    return m;
}

bool nm_machine_add_config_devices(nm_machine *m, GError **err)
{
    for (guint i = 0; i < m->cfg->devices->len; i++) {
        const nm_devcfg *d = m->cfg->devices->pdata[i];
        if (!nm_machine_add_device(m, nm_device_class_find(d->model), d, err)) return false;
    }
    return true;
}

nm_machine *nm_machine_new(const nm_config *cfg, GError **err)
{
    nm_machine *m = nm_machine_new_bare(cfg, err);
    if (m && !nm_machine_add_config_devices(m, err)) {
        nm_machine_free(m);
        return NULL;
    }
    return m;
}

void nm_machine_free(nm_machine *m)
{
    if (!m) return;
    nm_cpu_free(m->cpu);
    /* Devices go in reverse order: later ones may depend on earlier ones. */
    for (guint i = m->devices->len; i-- > 0;) {
        nm_device_instance *inst = m->devices->pdata[i];
        if (inst->cls->destroy) inst->cls->destroy(inst->state);
        g_free(inst->name);
        g_free(inst);
    }
    g_ptr_array_free(m->devices, TRUE);
    /* The measurement window and the cost-model state, after every device
     * (and before the memory map, whose DMA snoop the timing state holds). */
    if (m->window_ops && m->window_ops->destroy) m->window_ops->destroy(m->window_opaque);
    g_array_free(m->pollers, TRUE);
    nm_ioport_free(m->io);
    nm_memmap_free(m->mem);
    g_free(m->stop_detail);
    g_free(m->model_at_mhz);
    nm_snapshot_free(m);
    g_free(m);
    /* The end of the run: how many log lines were held back, per cause. */
    nm_log_limit_flush();
}

void nm_machine_report(nm_machine *m, nm_report *r)
{
    nm_report_section(r, "machine");
    nm_report_str(r, "cpu", m->model->name);
    nm_report_double(r, "cpu_mhz", nm_cpu_model_mhz(m->model));
    static const char *const fpu_names[] = {"none", "387", "486", "pentium"};
    nm_report_str(r, "fpu", fpu_names[m->model->fpu]);
    if (nm_cpu_model_overridden(m->model)) { /* --mhz */
        char label[96];
        nm_cpu_model_label(m->model, label, sizeof label);
        nm_report_str(r, "cpu_clock", "overridden");
        nm_report_str(r, "cpu_label", label);
        nm_report_double(r, "cpu_nominal_mhz", nm_cpu_model_mhz(nm_cpu_model_nominal(m->model)));
        nm_report_double(r, "cpu_bus_mhz",
                         (double)m->model->bus_hz_num / (double)m->model->bus_hz_den / 1e6);
    }
    nm_report_u64(r, "ram_bytes", m->cfg->ram_bytes);
    nm_report_u64(r, "cycles", m->clock.cycles);
    nm_report_u64(r, "virtual_time_ns", nm_clock_now_ns(&m->clock));
    nm_report_u64(r, "bus_wait_cycles", m->clock.bus_wait_cycles);
    nm_report_u64(r, "events_fired", m->clock.events_fired);
    nm_report_u64(r, "unmapped_reads", m->mem->unmapped_reads);
    nm_report_u64(r, "unmapped_writes", m->mem->unmapped_writes);
    nm_report_u64(r, "rom_writes", m->mem->rom_writes);
    nm_report_u64(r, "dma_refused", m->mem->dma_refused);
    nm_report_u64(r, "unclaimed_port_reads", m->io->unclaimed_reads);
    nm_report_u64(r, "unclaimed_port_writes", m->io->unclaimed_writes);
    for (guint i = 0; i < m->devices->len; i++) {
        nm_device_instance *inst = m->devices->pdata[i];
        if (!inst->cls->report) continue;
        nm_report_section(r, inst->name);
        nm_report_str(r, "model", inst->cls->name);
        inst->cls->report(inst->state, r);
    }
}
