/* The smallest useful MPI program: each rank prints "rank R of N on HOST: allreduce ok" after two
 * allreduces, one int and one of 1 Mi floats (4 MiB, gradient-sized: it takes the large-message
 * paths of the shared-memory and TCP transports), so a launch whose ranks cannot talk fails here. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 0, len = 0;
  char host[MPI_MAX_PROCESSOR_NAME];
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  MPI_Get_processor_name(host, &len);

  int one = 1, sum = 0;
  MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  int ok = sum == size;

  enum { kCount = 1 << 20 };
  float *buf = malloc(kCount * sizeof(float));
  for (int i = 0; i < kCount; ++i)
    buf[i] = (float)(rank + 1);
  MPI_Allreduce(MPI_IN_PLACE, buf, kCount, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
  const float expected = (float)size * (float)(size + 1) / 2.0f;
  for (int i = 0; i < kCount; ++i)
    ok = ok && buf[i] == expected;
  free(buf);

  printf("rank %d of %d on %s: allreduce %s\n", rank, size, host, ok ? "ok" : "WRONG");
  fflush(stdout);
  MPI_Finalize();
  return ok ? 0 : 1;
}
