/* `nicemu sweep SPEC`: a matrix of runs (kernels x CPU models x boards x
 * workload parameters) described in a key-file, expanded to one job per
 * cell, run through GNU parallel (locally or over ssh), each cell's report
 * cached by a hash of its inputs, gathered into one table (docs/sweeps.md). */
#ifndef NICEMU_SWEEP_H
#define NICEMU_SWEEP_H

/* argv[0] is "sweep".  Returns the exit status: 0 every cell has a result,
 * 1 a cell failed, 2 bad usage or a bad spec (nothing run). */
int nm_sweep_main(int argc, char **argv);

#endif
