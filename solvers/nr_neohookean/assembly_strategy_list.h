// The strategy table of nr-neohookean: one line per strategy (assembly_strategy.h says how to add
// one). Included twice by assembly_strategies.cpp with EB_NR_STRATEGY defined differently (once
// to declare the factories, once to fill the table); no include guard on purpose.
//   EB_NR_STRATEGY(factory suffix, "cli-name", Host|Device, deterministic, "summary")
// The first line is the method's default variant.
EB_NR_STRATEGY(assembly_cpu_opt, "cpu-opt", Host, true,
               "AssemblyCPU_Opt: direct stiffness into precomputed value locations (element_value_map)")
EB_NR_STRATEGY(assembly_cpu, "cpu", Host, true,
               "AssemblyCPU: direct stiffness (Alg. 1), entries located by searching the pattern")
#if defined(ELASTOBENCH_HAVE_CUDA)
EB_NR_STRATEGY(globalnz, "globalnz", Device, true,
               "GlobalNZ: element per thread with block element lists and nodal prefetch, element data to "
               "global memory, reduction array (Alg. 2, LPT packing)")
EB_NR_STRATEGY(sharednz, "sharednz", Device, true, "SharedNZ: greedy node partitions sized to the opt-in shared memory per block (227 KB on H100), element data staged in shared memory, scatter + reduction arrays (Sec. 16.3.2)")
EB_NR_STRATEGY(sharednz_block, "sharednz-block", Device, true, "SharedNZ with node-block reduction lists (Sec. 16.5's 3x3 blocks): one source index per element and node pair instead of nine")
EB_NR_STRATEGY(sharednz_2sm, "sharednz-2sm", Device, true, "SharedNZ with two 128-thread blocks per SM, each with half the SM's shared memory (113 KB on H100), so that one block's element phase overlaps the other's reduction")
EB_NR_STRATEGY(sharednz_48k, "sharednz-48k", Device, true, "SharedNZ with Fermi's 48 KB per block (the paper's GTX 480 budget), for the partition-size comparison")
EB_NR_STRATEGY(coloured, "coloured", Device, true, "element colouring (no shared node within a colour), one launch per colour, values added in place without atomics")
#endif
