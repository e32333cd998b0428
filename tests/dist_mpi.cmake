# tests/dist_mpi.cmake: dist's start-up under mpirun (issue 32) wherever the build has MPI and
# mpirun is installed. Two processes run tests/programs/dist_mpi_check: with no GPU (CI) both
# reach dist::init's device check knowing their ranks ("rank R of 2 has no GPU", or "another
# rank has no GPU" on a machine of 1 GPU, together: no
# rank is left waiting in the NCCL id's broadcast); with 2 GPUs both run every program against
# the unsharded run ("rank R of 2: ok"). The GPU check (scripts/gpu-check.sh) runs the same
# program and its failure mode on the 2-GPU machine.
find_program(CUFUSE_MPIRUN mpirun)
if(CUFUSE_MPIRUN AND MPI_CXX_FOUND)
  add_test(NAME dist_mpi_start
    COMMAND bash -c "out=$(timeout 120 ${CUFUSE_MPIRUN} --allow-run-as-root --oversubscribe -np 2 $<TARGET_FILE:dist_mpi_check> 2>&1); echo \"$out\"; \
n=$(echo \"$out\" | grep -cE 'rank [01] of 2(: another rank has no GPU| has no GPU|: ok)'); [ \"$n\" -eq 2 ]")
  set_tests_properties(dist_mpi_start PROPERTIES TIMEOUT 150
    ENVIRONMENT "CUFUSE_CACHE_DIR=${CMAKE_CURRENT_BINARY_DIR}/kernel-cache;CUFUSE_DIST_TIMEOUT=60")
endif()
