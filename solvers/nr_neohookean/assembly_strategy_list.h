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
#endif
