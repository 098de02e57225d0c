// token.make / token.join and !token.token parse from the custom form, print in it and
// re-parse; the generic form round-trips too. join takes one or more tokens (a repeated
// operand is kept: join is idempotent, but folding it is a canonicalization's job).
// RUN: strata-opt %s | strata-opt | filecheck %s
// RUN: strata-opt %s --print-op-generic | strata-opt --print-op-generic | filecheck %s --check-prefix=GENERIC

func.func @tokens(%a: !token.token, %b: !token.token) -> !token.token {
  %t0 = token.make : !token.token
  %t1 = token.join %a : !token.token
  %t2 = token.join %a, %a : !token.token
  %t3 = token.join %t0, %t1, %b : !token.token
  %t4 = token.join %t3, %t2 {note = "all"} : !token.token
  func.return %t4 : !token.token
}

// CHECK: builtin.module {
// CHECK-LABEL: func.func @tokens(%a: !token.token, %b: !token.token) -> !token.token {
// CHECK-NEXT: %t0 = token.make : !token.token
// CHECK-NEXT: %t1 = token.join %a : !token.token
// CHECK-NEXT: %t2 = token.join %a, %a : !token.token
// CHECK-NEXT: %t3 = token.join %t0, %t1, %b : !token.token
// CHECK-NEXT: %t4 = token.join %t3, %t2 {note = "all"} : !token.token
// CHECK-NEXT: func.return %t4 : !token.token
// CHECK-NEXT: }
// CHECK-NEXT: }

// GENERIC: "builtin.module"() ({
// GENERIC-LABEL: "func.func"() <{sym_name = "tokens", function_type = (!token.token, !token.token) -> !token.token}> ({
// GENERIC-NEXT: ^bb0(%a: !token.token, %b: !token.token):
// GENERIC-NEXT: %t0 = "token.make"() : () -> !token.token
// GENERIC-NEXT: %t1 = "token.join"(%a) : (!token.token) -> !token.token
// GENERIC-NEXT: %t2 = "token.join"(%a, %a) : (!token.token, !token.token) -> !token.token
// GENERIC-NEXT: %t3 = "token.join"(%t0, %t1, %b) : (!token.token, !token.token, !token.token) -> !token.token
// GENERIC-NEXT: %t4 = "token.join"(%t3, %t2) {note = "all"} : (!token.token, !token.token) -> !token.token
// GENERIC-NEXT: "func.return"(%t4) : (!token.token) -> ()
// GENERIC-NEXT: }) : () -> ()
// GENERIC-NEXT: }) : () -> ()
