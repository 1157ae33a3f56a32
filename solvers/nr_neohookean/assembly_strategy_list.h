// The strategy table of nr-neohookean: one line per strategy (assembly_strategy.h says how to add
// one). Included twice by assembly_strategies.cpp with EB_NR_STRATEGY defined differently (once
// to declare the factories, once to fill the table); no include guard on purpose.
//   EB_NR_STRATEGY(factory suffix, "cli-name", Host|Device, deterministic, "summary")
EB_NR_STRATEGY(assembly_cpu, "cpu", Host, true,
               "AssemblyCPU: direct stiffness (Alg. 1), entries located by searching the pattern")
EB_NR_STRATEGY(assembly_cpu_opt, "cpu-opt", Host, true,
               "AssemblyCPU_Opt: direct stiffness into precomputed value locations (element_value_map)")
#if defined(ELASTOBENCH_HAVE_CUDA)
// Device strategies here.
#endif
