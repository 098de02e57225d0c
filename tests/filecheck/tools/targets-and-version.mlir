// strata-opt offers only the -t output targets that work on Strata IR: xDSL's llvm,
// x86-asm, riscv-asm, ... reject graph and loops IR (LLVM IR comes from strata-translate).
// Every tool prints its name and the package version for --version.
// RUN: strata-opt --help | filecheck %s --check-prefix=HELP
// RUN: not strata-opt %s -p cpu-pipeline -t llvm 2>&1 | filecheck %s --check-prefix=LLVM
// RUN: strata-opt %s -t mlir | filecheck %s --check-prefix=MLIR
// RUN: strata-opt --version | filecheck %s --check-prefix=OPTV
// RUN: strata-run --version | filecheck %s --check-prefix=RUNV
// RUN: strata-translate --version | filecheck %s --check-prefix=TRANSLATEV

func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  func.return %x : tensor<4xf32>
}

// HELP:      Available targets are: mlir{{$}}
// HELP-NEXT: -o OUTPUT_FILE
// HELP:     --list-passes
// HELP:     --timing

// LLVM: strata-opt: error: argument -t/--target: invalid choice: 'llvm' (choose from mlir)

// MLIR: func.func @f

// OPTV:       {{^strata-opt [0-9]+\.[0-9]+\.[0-9]+}}
// RUNV:       {{^strata-run [0-9]+\.[0-9]+\.[0-9]+}}
// TRANSLATEV: {{^strata-translate [0-9]+\.[0-9]+\.[0-9]+}}
