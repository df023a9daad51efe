//! The printer and parser: the exact text form, round trips for every op kind, and errors.

mod support;

use rextio_ir::{
    parse_function, parse_module, print_function, print_module, ExprId, ExprKind, Function, Module,
    ParseError, Stmt, Type,
};
use support::{every_op, phase_a, F32_2D};

const PHASE_A_TEXT: &str = "\
fn inference(%x: tensor<f32, cpu, 2>, %weight: tensor<f32, cpu, 2>, %bias: tensor<f32, cpu, 1>) -> tensor<f32, cpu, 1> {
  %0: tensor<f32, cpu, 2> = param 0
  %1: tensor<f32, cpu, 2> = param 1
  %2: tensor<f32, cpu, 1> = param 2
  %3: tensor<f32, cpu, 2> = linear %0, %1, %2
  %4: tensor<f32, cpu, 2> = relu %3
  %5: tensor<f32, cpu, 1> = mean %4, dim=1, keepdim=false
  return %5
}
";

fn names(f: &Function) -> Vec<(ExprId, String)> {
    f.names
        .iter()
        .map(|(id, name)| (id, name.clone()))
        .collect()
}

/// Both round-trip invariants, plus the names table surviving the trip.
fn assert_round_trip(f: &Function) {
    let text = print_function(f);
    let parsed = parse_function(&text).unwrap_or_else(|e| panic!("{e}\n{text}"));
    assert_eq!(&parsed, f, "parse(print(f)) != f for\n{text}");
    assert_eq!(print_function(&parsed), text);
    assert_eq!(names(&parsed), names(f));
}

fn parse_error(text: &str) -> ParseError {
    match parse_function(text) {
        Ok(f) => panic!("expected a parse error, parsed:\n{}", print_function(&f)),
        Err(e) => e,
    }
}

#[test]
fn phase_a_prints_in_the_documented_form() {
    assert_eq!(print_function(&phase_a()), PHASE_A_TEXT);
    insta::assert_snapshot!("phase_a_text", print_function(&phase_a()));
}

#[test]
fn phase_a_round_trips() {
    assert_round_trip(&phase_a());
    assert_eq!(parse_function(PHASE_A_TEXT), Ok(phase_a()));
}

#[test]
fn every_op_kind_round_trips() {
    let f = every_op();
    assert_round_trip(&f);
    // Each op kind on its own too, so a failure names the op.
    for (id, expr) in f.exprs.iter() {
        let mut single = Function::new("single", f.params.clone(), expr.ty);
        for (operand_id, operand) in f.exprs.iter().take_while(|(other, _)| *other != id) {
            single.push_let(operand.kind.clone(), operand.ty);
            if let Some(name) = f.name_of(operand_id) {
                single.names.insert(operand_id, name.to_string());
            }
        }
        let last = single.push_let(expr.kind.clone(), expr.ty);
        single.body.stmts.push(Stmt::Return(last));
        assert_round_trip(&single);
    }
}

#[test]
fn every_op_kind_prints_its_attributes() {
    let text = print_function(&every_op());
    for line in [
        "= const.int -3",
        "= const.int -9223372036854775808",
        "= const.int 9223372036854775807",
        "= const.bool true",
        "= const.bool false",
        "= gelu %0",
        "= silu %0",
        "= rsqrt %0",
        "= relu6 %0",
        "= gelu_tanh %0",
        "= div %0, %3",
        "= linear %0, %1, %2  # hidden",
        "= linear %0, %1\n",
        "= matmul %0, %3",
        "= sum %27, dim=1, keepdim=true",
        "= amax %27, dim=1, keepdim=true",
        "= amin %27, dim=1, keepdim=true",
        "= log_softmax %27, dim=0",
        "= softmax %27, dim=1  # probs",
        "= argmax %39, dim=0, keepdim=true",
        "= fused_linear %0, %1, %2, activations=[], tail=none",
        "= fused_linear %0, %1, %2, %2, %0, prologue=[mul], activations=[gelu], tail=none, residual=left",
        "= fused_linear %0, %1, %60, %2, %2, %2, %0, norm=layer_norm(eps=1e-5, affine=true), prologue=[add], activations=[], tail=none, residual=right",
        "= fused_linear %0, %1, %60, %2, %0, norm=layer_norm(eps=1e-5, affine=false), prologue=[add], activations=[], tail=none, residual=right",
        "= fused_linear %0, %1, %2, %2, %0, prologue=[mul], activations=[gelu], tail=none, bias=added, residual=right",
        "= fused_matmul %0, %1, %2, %2, prologue=[sub, div], activations=[relu, tanh], tail=mean(dim=1, keepdim=false)",
        "%0: tensor<f32, cpu, 2> = param 0  # x",
        "tail=log_softmax(dim=1)",
        "%41: tensor<i64, cpu, 2> = argmax",
        "= layer_norm %0, %4, %3, %2, eps=1e-5",
        "= layer_norm %3, %4, eps=0.0",
        "= embedding %40, %1",
        "%42: tensor<f32, cpu, 2> = cat %0, %0, dim=1\n",
        "%43: tensor<f32, cpu, 1> = cat %3, dim=0\n",
        "%44: tensor<f32, cpu, 2> = stack %3, %3, %3, dim=1\n",
        "= embedding_bag %40, %1, %40, mode=sum",
        "= embedding_bag %40, %1, %40, mode=mean",
        "= embedding_bag %40, %1, %40, mode=max",
        ": int = const.int",
        ": bool = const.bool",
    ] {
        assert!(text.contains(line), "missing `{line}` in\n{text}");
    }
    insta::assert_snapshot!("every_op_text", text);
}

#[test]
fn labels_are_free_form_and_renumbered() {
    let text = "
fn f(%a: tensor<f32, cpu, 2>, %b: tensor<f32, cuda0, 1>) -> tensor<f32, cpu, 2> {
  %x: tensor<f32, cpu, 2> = param 0
  %7: tensor<f32, cuda0, 1> = param 1
  %h: tensor<f32, cpu, 2> = add %x, %7  # total
  %h2: tensor<f32, cpu, 2> = mul %h, %h
  return %h2
}
";
    let f = parse_function(text).expect("parses");
    assert_eq!(
        print_function(&f),
        "\
fn f(%a: tensor<f32, cpu, 2>, %b: tensor<f32, cuda0, 1>) -> tensor<f32, cpu, 2> {
  %0: tensor<f32, cpu, 2> = param 0
  %1: tensor<f32, cuda0, 1> = param 1
  %2: tensor<f32, cpu, 2> = add %0, %1  # total
  %3: tensor<f32, cpu, 2> = mul %2, %2
  return %3
}
"
    );
    assert_eq!(f.params[1].name, "b");
    assert_eq!(
        f.name_of(f.returns().into_iter().next().expect("one return")),
        None
    );
}

#[test]
fn layout_is_flexible_where_it_does_not_matter() {
    // CRLF line ends, extra blanks, comment lines, blank lines, a comment after `{`.
    let text = "# leading comment\r\n\r\nfn  g( ) -> int {   # header comment\r\n\r\n  # a comment line\r\n   %c :int=const.int   42   #   the answer  \r\n  return   %c\r\n}\r\n\r\n";
    let f = parse_function(text).expect("parses");
    assert_eq!(
        print_function(&f),
        "fn g() -> int {\n  %0: int = const.int 42  # the answer\n  return %0\n}\n"
    );
    assert!(f.params.is_empty());
    assert_eq!(f.exprs.len(), 1);
}

#[test]
fn several_returns_parse_and_validation_judges_them() {
    let text = "fn f() -> bool {\n  %0: bool = const.bool true\n  return %0\n  return %0\n}\n";
    let f = parse_function(text).expect("parses");
    assert_eq!(f.returns().len(), 2);
    assert_eq!(print_function(&f), text);
}

#[test]
fn parser_does_not_type_check() {
    // Wrong declared types, a rank-7 tensor and a dangling param index are syntax-valid.
    let text = "fn f() -> tensor<i64, cuda0, 7> {\n  %0: bool = param 9\n  %1: tensor<i64, cuda0, 7> = relu %0\n  return %1\n}\n";
    let f = parse_function(text).expect("parses");
    assert_eq!(print_function(&f), text);
}

#[test]
fn names_are_printed_on_one_line() {
    let mut f = phase_a();
    let ids: Vec<ExprId> = f.exprs.iter().map(|(id, _)| id).collect();
    f.names.insert(ids[3], "  hidden\nstate ".to_string());
    f.names.insert(ids[4], " \t ".to_string());
    let text = print_function(&f);
    assert!(
        text.contains("= linear %0, %1, %2  # hidden state\n"),
        "{text}"
    );
    assert!(text.contains("= relu %3\n"), "{text}");
    let reparsed = parse_function(&text).expect("parses");
    assert_eq!(reparsed.name_of(ids[3]), Some("hidden state"));
    assert_eq!(print_function(&reparsed), text);
}

#[test]
fn modules_round_trip() {
    let mut second = Function::new("second", vec![], Type::Int);
    let c = second.push_let(ExprKind::ConstInt(0), Type::Int);
    second.body.stmts.push(Stmt::Return(c));
    let module = Module {
        source_name: "model.py".to_string(),
        functions: vec![phase_a(), every_op(), second],
    };
    let text = print_module(&module);
    assert!(
        text.contains("}\n\nfn every_op("),
        "functions are separated by one blank line"
    );
    assert!(text.starts_with("fn inference(") && text.ends_with("return %0\n}\n"));
    let parsed = parse_module(&text, "model.py").expect("parses");
    assert_eq!(parsed, module);
    assert_eq!(print_module(&parsed), text);
    assert_eq!(
        parse_module("", "empty.py"),
        Ok(Module {
            source_name: "empty.py".into(),
            functions: vec![]
        })
    );
    assert_eq!(print_module(&Module::default()), "");
}

#[test]
fn parse_error_is_an_error_with_a_position() {
    fn takes_error(_: &dyn std::error::Error) {}
    let error = parse_error("fn f() -> int {\n  %0: int = frobnicate %1\n  return %0\n}\n");
    takes_error(&error);
    assert_eq!(error.to_string(), "2:13: unknown op `frobnicate`");
    assert_eq!((error.line, error.column), (2, 13));
}

/// `(text, line, column, message fragment)`: each text is rejected there with that message.
#[test]
fn malformed_texts_are_rejected_with_positions() {
    let sig = "fn f(%x: tensor<f32, cpu, 2>) -> tensor<f32, cpu, 2> {\n  %0: tensor<f32, cpu, 2> = param 0\n";
    let cases: Vec<(String, usize, usize, &str)> = vec![
        ("".into(), 1, 1, "expected `fn`, found end of input"),
        ("   \n# only a comment\n".into(), 3, 1, "expected `fn`"),
        ("func f() -> int {".into(), 1, 1, "expected `fn`, found `func`"),
        (format!("{sig}  %1: tensor<f32, cpu, 2> = frob %0\n  return %1\n}}\n"), 3, 29, "unknown op `frob`"),
        (format!("{sig}  %1: tensor<f32, cpu, 2> = add %0\n  return %1\n}}\n"), 3, 29, "`add` takes 2 operands, found 1"),
        (format!("{sig}  %1: tensor<f32, cpu, 2> = relu %0, %0\n  return %1\n}}\n"), 3, 29, "`relu` takes 1 operand, found 2"),
        (format!("{sig}  %1: tensor<f32, cpu, 2> = linear %0\n  return %1\n}}\n"), 3, 29, "`linear` takes 2 or 3 operands, found 1"),
        (format!("{sig}  %1: tensor<f32, cpu, 2> = linear %0, %0, %0, %0\n  return %1\n}}\n"), 3, 29, "`linear` takes 2 or 3 operands, found 4"),
        (format!("{sig}  %1: tensor<f32, cpu, 2> = fused_linear %0, activations=[], tail=none\n  return %1\n}}\n"), 3, 29, "`fused_linear` takes 2 or 3 operands, found 1"),
        (format!("{sig}  %1: tensor<f32, cpu, 2> = fused_linear %0, %0, prologue=[sub], activations=[], tail=none\n  return %1\n}}\n"), 3, 29, "`fused_linear` takes 2 or 3 operands and one per prologue step (1), found 2"),
        (format!("{sig}  %1: tensor<f32, cpu, 2> = fused_matmul %0, %0, %0, prologue=[pow], activations=[], tail=none\n  return %1\n}}\n"), 3, 64, "unknown prologue op `pow`"),
        (format!("{sig}  %1: tensor<f32, cpu, 2> = relu\n  return %1\n}}\n"), 3, 33, "expected an operand of `relu`, found end of line"),
        (format!("{sig}  %1: tensor<f32, cpu, 2> = relu %9\n  return %1\n}}\n"), 3, 34, "undefined value `%9`"),
        (format!("{sig}  %1: tensor<f32, cpu, 2> = relu %1\n  return %1\n}}\n"), 3, 34, "undefined value `%1`"),
        (format!("{sig}  %1: tensor<f32, cpu, 2> = relu %x\n  return %1\n}}\n"), 3, 34, "undefined value `%x`"),
        (format!("{sig}  %0: tensor<f32, cpu, 2> = relu %0\n  return %0\n}}\n"), 3, 3, "value `%0` is already defined on line 2"),
        (format!("{sig}  return %7\n}}\n"), 3, 10, "undefined value `%7`"),
        (format!("{sig}}}\n"), 3, 1, "function `f` has no `return`"),
        (format!("{sig}  return %0\n"), 4, 1, "missing its closing `}`"),
        (format!("{sig}  %1: tensor<f32, cpu, 2> = mean %0\n  return %1\n}}\n"), 3, 36, "expected `, dim=`, found end of line"),
        (format!("{sig}  %1: tensor<f32, cpu, 2> = mean %0, keepdim=true, dim=1\n  return %1\n}}\n"), 3, 38, "expected `dim`, found `keepdim`"),
        (format!("{sig}  %1: tensor<f32, cpu, 2> = mean %0, dim=256, keepdim=true\n  return %1\n}}\n"), 3, 42, "`256` is out of range for a dim (0..=255)"),
        (format!("{sig}  %1: tensor<f32, cpu, 2> = mean %0, dim=-1, keepdim=true\n  return %1\n}}\n"), 3, 42, "`-1` is out of range for a dim"),
        (format!("{sig}  %1: tensor<f32, cpu, 2> = mean %0, dim=1, keepdim=yes\n  return %1\n}}\n"), 3, 53, "expected `true` or `false` for keepdim, found `yes`"),
        (format!("{sig}  %1: tensor<f32, cpu, 2> = softmax %0, dim=1, keepdim=true\n  return %1\n}}\n"), 3, 46, "expected end of line, found `,`"),
        (format!("{sig}  %1: int = param 99999999999999999999\n  return %1\n}}\n"), 3, 19, "`99999999999999999999` is out of range for a parameter index"),
        (format!("{sig}  %1: int = const.int 9223372036854775808\n  return %1\n}}\n"), 3, 23, "out of range for a 64-bit integer"),
        (format!("{sig}  %1: int = const.bool maybe\n  return %1\n}}\n"), 3, 24, "expected `true` or `false`"),
        (format!("{sig}  %1: double = const.int 1\n  return %1\n}}\n"), 3, 7, "unknown type `double`"),
        (format!("{sig}  %1: tensor<f16, cpu, 2> = relu %0\n  return %1\n}}\n"), 3, 14, "unknown dtype `f16`"),
        (format!("{sig}  %1: tensor<f32, tpu, 2> = relu %0\n  return %1\n}}\n"), 3, 19, "unknown device `tpu`"),
        (format!("{sig}  %1: tensor<f32, cpu, 300> = relu %0\n  return %1\n}}\n"), 3, 24, "`300` is out of range for a rank"),
        (format!("{sig}  %1: tensor<f32, cpu> = relu %0\n  return %1\n}}\n"), 3, 22, "expected `,`, found `>`"),
        (format!("{sig}  %1: tensor<f32, cpu, 2> = fused_linear %0, %0, activations=[relu, frob], tail=none\n  return %1\n}}\n"), 3, 69, "unknown activation `frob`"),
        (format!("{sig}  %1: tensor<f32, cpu, 2> = fused_linear %0, %0, activations=[relu], tail=max(dim=1, keepdim=false)\n  return %1\n}}\n"), 3, 75, "unknown tail `max`"),
        (format!("{sig}  %1: tensor<f32, cpu, 2> = fused_linear %0, %0, tail=none\n  return %1\n}}\n"), 3, 50, "expected `activations`, found `tail`"),
        (format!("{sig}  %1: tensor<f32, cpu, 2> = fused_linear %0, %0, activations=[relu]\n  return %1\n}}\n"), 3, 68, "expected `, tail=`, found end of line"),
        (format!("{sig}  %1: tensor<f32, cpu, 2> = layer_norm %0, %0, %0, eps=1e-5\n  return %1\n}}\n"), 3, 29, "`layer_norm` takes 2 operands or 4 (input, normalized, weight, bias), found 3"),
        (format!("{sig}  %1: tensor<f32, cpu, 2> = layer_norm %0, %0, normalized=4\n  return %1\n}}\n"), 3, 48, "expected `eps`, found `normalized`"),
        (format!("{sig}  %1: tensor<f32, cpu, 2> = layer_norm %0, %0\n  return %1\n}}\n"), 3, 46, "expected `, eps=`, found end of line"),
        (format!("{sig}  %1: tensor<f32, cpu, 2> = embedding %0\n  return %1\n}}\n"), 3, 29, "`embedding` takes 2 operands, found 1"),
        (format!("{sig}  %1: tensor<f32, cpu, 2> = embedding_bag %0, %0\n  return %1\n}}\n"), 3, 29, "`embedding_bag` takes 3 operands (ids, weight, offsets), found 2"),
        (format!("{sig}  %1: tensor<f32, cpu, 2> = embedding_bag %0, %0, %0\n  return %1\n}}\n"), 3, 53, "expected `, mode=`, found end of line"),
        (format!("{sig}  %1: tensor<f32, cpu, 2> = embedding_bag %0, %0, %0, mode=min\n  return %1\n}}\n"), 3, 60, "expected `sum`, `mean` or `max` for mode, found `min`"),
        (format!("{sig}  %1: tensor<f32, cpu, 2> = relu %0 @\n  return %1\n}}\n"), 3, 37, "unexpected character `@`"),
        (format!("{sig}  %1: tensor<f32, cpu, 2> = relu %\n  return %1\n}}\n"), 3, 34, "expected a value label after `%`"),
        (format!("{sig}  %1: int = const.int - 1\n  return %1\n}}\n"), 3, 23, "expected `->` or a number after `-`"),
        (format!("{sig}  %1 tensor<f32, cpu, 2> = relu %0\n  return %1\n}}\n"), 3, 6, "expected `:`, found `tensor`"),
        (format!("{sig}  relu %0\n  return %0\n}}\n"), 3, 3, "expected a statement or `}`, found `relu`"),
        (format!("{sig}  return %0\n}} fn"), 4, 3, "expected end of line, found `fn`"),
        (format!("{sig}  return %0\n}}\nfn g() -> int {{\n  %0: int = const.int 0\n  return %0\n}}\n"), 5, 1, "use `parse_module` for several functions"),
        (format!("{sig}  for %i: int in range(%0, %0) {{\n    continue\n  }}\n  return %0\n}}\n"), 3, 30, "expected `,`, found `)`"),
        (format!("{sig}  for %i: int in loop(%0) {{\n  }}\n  return %0\n}}\n"), 3, 18, "unknown iteration `loop`"),
        (format!("{sig}  for %i: int in values[1, x] {{\n  }}\n  return %0\n}}\n"), 3, 28, "expected a 64-bit integer"),
        (format!("{sig}  for %i: int in values[1.5] {{\n  }}\n  return %0\n}}\n"), 3, 25, "`1.5` is out of range for a 64-bit integer"),
        (format!("{sig}  for %i: int in values[] carry(%a: int = %0 %b) {{\n  }}\n  return %0\n}}\n"), 3, 46, "expected `->` and the loop's result"),
        (format!("{sig}  for %i: int in values[] carry(%0: int = %0 -> %b) {{\n  }}\n  return %0\n}}\n"), 3, 33, "value `%0` is already defined on line 2"),
        (format!("{sig}  while {{\n    %1: bool = const.bool true\n  }} do {{\n  }}\n  return %0\n}}\n"), 5, 3, "expected `test %value` before `}`"),
        (format!("{sig}  while {{\n    test %0\n  }} {{\n  }}\n  return %0\n}}\n"), 5, 5, "expected `do`"),
        (format!("{sig}  if %0 {{\n    yield\n  }}\n  return %0\n}}\n"), 5, 4, "expected `else`, found end of line"),
        (format!("{sig}  if %0 -> (%r) {{\n  }}\n  return %0\n}}\n"), 3, 15, "expected `:`"),
        (format!("{sig}  if %0 -> (%r: int) {{\n    yield %r\n  }} else {{\n  }}\n  return %0\n}}\n"), 4, 11, "undefined value `%r`"),
        (format!("{sig}  continue %9\n  return %0\n}}\n"), 3, 12, "undefined value `%9`"),
        (format!("{sig}  %1: float = const.float 1.5.2\n  return %1\n}}\n"), 3, 30, "unexpected character `.`"),
        (format!("{sig}  %1: float = const.float x\n  return %1\n}}\n"), 3, 27, "expected a float"),
        (format!("{sig}  %1: int = scalar.add %0\n  return %1\n}}\n"), 3, 13, "`scalar.add` takes 2 operands, found 1"),
        ("fn f(%x tensor<f32, cpu, 2>) -> int {".into(), 1, 9, "expected `:`, found `tensor`"),
        ("fn f(x: int) -> int {".into(), 1, 6, "expected a parameter `%name`, found `x`"),
        ("fn f() int {".into(), 1, 8, "expected `->` and the result type, found `int`"),
        ("fn f() -> int { %0: int = const.int 0\n".into(), 1, 17, "expected end of line, found `%0`"),
        ("fn f() -> int {\n  %0: int = const.int 0\n  return %0\n".into(), 4, 1, "missing its closing `}`"),
        ("fn f() -> int {\n  %0: int = const.int 0\n  return\n}\n".into(), 3, 9, "expected the returned value, found end of line"),
    ];
    let mut mismatches = Vec::new();
    for (text, line, column, fragment) in cases {
        let error = parse_error(&text);
        if !error.message.contains(fragment) || (error.line, error.column) != (line, column) {
            mismatches.push(format!(
                "expected {line}:{column}: ..{fragment}.., got {error}"
            ));
        }
    }
    assert!(mismatches.is_empty(), "{}", mismatches.join("\n"));
}

/// Tiny deterministic generator, so the fuzz-ish tests need no extra dependency.
struct Lcg(u64);

impl Lcg {
    fn next(&mut self) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        self.0 >> 33
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

#[test]
fn every_truncation_is_handled_without_panicking() {
    let text = print_function(&every_op());
    let boundaries: Vec<usize> = text.char_indices().map(|(i, _)| i).collect();
    let closing_brace = text.trim_end().len() - 1;
    for &end in boundaries.iter().filter(|&&end| end <= closing_brace) {
        // These prefixes lack the final `}` at least, so none of them parses.
        assert!(
            parse_function(&text[..end]).is_err(),
            "prefix of {end} bytes parsed"
        );
        let _ = parse_module(&text[..end], "prefix.py");
    }
}

#[test]
fn mutated_and_garbage_texts_never_panic() {
    let text = print_function(&every_op());
    let pieces = [
        "%",
        "%0",
        "%999",
        ",",
        "(",
        ")",
        "<",
        ">",
        "[",
        "]",
        "{",
        "}",
        "=",
        ":",
        "->",
        "-",
        "#",
        "\n",
        " ",
        "fn",
        "return",
        "param",
        "linear",
        "fused_linear",
        "dim",
        "keepdim",
        "true",
        "18446744073709551616",
        "-9223372036854775809",
        "é",
        "\u{0}",
        "\r",
        "tensor<",
        "activations=[",
    ];
    let mut rng = Lcg(0x5eed);
    for _ in 0..3000 {
        let mut mutated: Vec<char> = text.chars().collect();
        for _ in 0..1 + rng.below(4) {
            let at = rng.below(mutated.len() + 1);
            match rng.below(3) {
                0 if at < mutated.len() => {
                    mutated.remove(at);
                }
                _ => {
                    let piece = pieces[rng.below(pieces.len())];
                    for (offset, c) in piece.chars().enumerate() {
                        mutated.insert(at + offset, c);
                    }
                }
            }
        }
        let mutated: String = mutated.into_iter().collect();
        if let Ok(f) = parse_function(&mutated) {
            // Whatever parses must print and re-parse to the same thing.
            let printed = print_function(&f);
            assert_eq!(parse_function(&printed).as_ref(), Ok(&f), "{mutated}");
        }
    }
    for _ in 0..2000 {
        let garbage: String = (0..rng.below(80))
            .map(|_| pieces[rng.below(pieces.len())])
            .collect::<Vec<_>>()
            .join(" ");
        let _ = parse_function(&garbage);
        let _ = parse_module(&garbage, "garbage.py");
    }
}

#[test]
fn deep_and_long_inputs_are_fine() {
    // A long chain of values and a very long line: nothing recursive depends on input size.
    let mut f = Function::new("chain", vec![], F32_2D);
    let mut last = f.push_let(ExprKind::Param(0), F32_2D);
    for _ in 0..20_000 {
        last = f.push_let(
            ExprKind::Unary {
                op: rextio_ir::UnaryOp::Relu,
                input: last,
            },
            F32_2D,
        );
    }
    f.body.stmts.push(Stmt::Return(last));
    assert_round_trip(&f);
    let long = format!(
        "fn f() -> int {{\n  %0: int = const.int {}\n}}\n",
        "9".repeat(100_000)
    );
    assert!(parse_function(&long).is_err());
}

#[test]
fn control_flow_round_trips_and_prints_canonically() {
    let f = parse_function(support::CONTROL_FLOW_TEXT).expect("parses");
    assert_eq!(print_function(&f), support::CONTROL_FLOW_TEXT);
    assert_round_trip(&f);
    assert_eq!(f.returns().len(), 2);
    assert!(!f.is_straight_line());
}

#[test]
fn control_flow_truncations_and_mutations_never_panic() {
    let text = support::CONTROL_FLOW_TEXT;
    let boundaries: Vec<usize> = text.char_indices().map(|(i, _)| i).collect();
    let closing_brace = text.trim_end().len() - 1;
    for &end in boundaries.iter().filter(|&&end| end <= closing_brace) {
        assert!(
            parse_function(&text[..end]).is_err(),
            "prefix of {end} bytes parsed"
        );
    }
    let mut rng = Lcg(7);
    let pieces = [
        "{", "}", "for", "while", "if", "else", "do", "test", "carry(", "->", "yield", "break",
        "continue", "%12", "range(", "values[", "1.5", "-inf", "\n",
    ];
    for _ in 0..3000 {
        let mut mutated = text.to_string();
        let at = boundaries[rng.below(boundaries.len())];
        mutated.insert_str(at, pieces[rng.below(pieces.len())]);
        let _ = parse_function(&mutated);
    }
}

#[test]
fn tensor_scalar_ops_round_trip_and_type() {
    use rextio_ir::{typing, Param, TensorScalarOp};
    let params = vec![
        Param {
            name: "x".to_string(),
            ty: F32_2D,
        },
        Param {
            name: "t".to_string(),
            ty: Type::Float,
        },
        Param {
            name: "n".to_string(),
            ty: Type::Int,
        },
    ];
    let mut f = Function::new("scalars", params, F32_2D);
    let x = f.push_let(ExprKind::Param(0), F32_2D);
    let t = f.push_let(ExprKind::Param(1), Type::Float);
    let n = f.push_let(ExprKind::Param(2), Type::Int);
    let half = f.push_let(
        ExprKind::ConstFloat(rextio_ir::FloatBits::new(-0.0)),
        Type::Float,
    );
    let mut last = x;
    for op in TensorScalarOp::ALL {
        for scalar in [t, n, half] {
            last = f.push_let(
                ExprKind::TensorScalar {
                    op,
                    tensor: last,
                    scalar,
                },
                F32_2D,
            );
        }
    }
    f.body.stmts.push(Stmt::Return(last));
    assert_round_trip(&f);
    let text = print_function(&f);
    for line in [
        "= add.scalar %0, %1",
        "= sub.scalar %7, %2",
        "= mul.scalar %",
        "= div.scalar %",
        "= rsub.scalar %",
        "= rdiv.scalar %",
        "%21: tensor<f32, cpu, 2> = rdiv.scalar %20, %3",
    ] {
        assert!(text.contains(line), "missing `{line}` in\n{text}");
    }
    // Typing: the tensor's type for an int or a float, never a bool or a tensor scalar.
    let ty = |scalar: Type| {
        typing::tensor_scalar(
            TensorScalarOp::RDiv,
            Type::Tensor(rextio_ir::TensorType::F32_CPU_1D),
            scalar,
        )
    };
    assert_eq!(
        ty(Type::Float),
        Ok(Type::Tensor(rextio_ir::TensorType::F32_CPU_1D))
    );
    assert_eq!(
        ty(Type::Int),
        Ok(Type::Tensor(rextio_ir::TensorType::F32_CPU_1D))
    );
    assert!(ty(Type::Bool).is_err());
    assert!(ty(F32_2D).is_err());
    assert!(typing::tensor_scalar(
        TensorScalarOp::Add,
        Type::Tensor(rextio_ir::TensorType::I64_CPU_1D),
        Type::Float
    )
    .is_err());
    // One operand too many is a parse error naming the op.
    let bad = text.replace("= add.scalar %0, %1", "= add.scalar %0, %1, %2");
    assert!(parse_function(&bad).is_err());
}

#[test]
fn param_unary_ops_round_trip_and_type() {
    use rextio_ir::{typing, FloatBits, Param, ParamUnaryOp, TensorType};
    let params = vec![
        Param {
            name: "x".to_string(),
            ty: F32_2D,
        },
        Param {
            name: "lo".to_string(),
            ty: Type::Float,
        },
        Param {
            name: "n".to_string(),
            ty: Type::Int,
        },
    ];
    let mut f = Function::new("params", params, F32_2D);
    let x = f.push_let(ExprKind::Param(0), F32_2D);
    let lo = f.push_let(ExprKind::Param(1), Type::Float);
    let n = f.push_let(ExprKind::Param(2), Type::Int);
    let neg = f.push_let(ExprKind::ConstFloat(FloatBits::new(-1.0)), Type::Float);
    let mut last = x;
    for op in ParamUnaryOp::ALL {
        let second = (op.arity() == 2).then_some(n);
        for first in [lo, neg] {
            last = f.push_let(
                ExprKind::ParamUnary {
                    op,
                    input: last,
                    first,
                    second,
                },
                F32_2D,
            );
        }
    }
    f.body.stmts.push(Stmt::Return(last));
    assert_round_trip(&f);
    let text = print_function(&f);
    for line in [
        "%4: tensor<f32, cpu, 2> = leaky_relu %0, %1",
        "%5: tensor<f32, cpu, 2> = leaky_relu %4, %3",
        "= elu %",
        "%8: tensor<f32, cpu, 2> = hardtanh %7, %1, %2",
        "= clamp %9, %1, %2",
        "= clamp_min %",
        "%15: tensor<f32, cpu, 2> = clamp_max %14, %3",
    ] {
        assert!(text.contains(line), "missing `{line}` in\n{text}");
    }
    // Arity is the op's: one parameter too many or too few is a parse error naming the op.
    for (good, bad) in [
        ("= leaky_relu %0, %1", "= leaky_relu %0, %1, %2"),
        ("= hardtanh %7, %1, %2", "= hardtanh %7, %1"),
    ] {
        let err = parse_function(&text.replace(good, bad)).unwrap_err();
        assert!(err.to_string().contains("operands"), "{err}");
    }
    // Typing: the input's type, int or float parameters only, the op's arity.
    let v = Type::Tensor(TensorType::F32_CPU_1D);
    assert_eq!(
        typing::param_unary(ParamUnaryOp::Clamp, v, Type::Int, Some(Type::Float)),
        Ok(v)
    );
    assert_eq!(
        typing::param_unary(ParamUnaryOp::Elu, v, Type::Float, None),
        Ok(v)
    );
    assert!(typing::param_unary(ParamUnaryOp::Elu, v, Type::Bool, None).is_err());
    assert!(typing::param_unary(ParamUnaryOp::ClampMin, v, F32_2D, None).is_err());
    assert!(typing::param_unary(ParamUnaryOp::Clamp, v, Type::Float, None).is_err());
    assert!(
        typing::param_unary(ParamUnaryOp::LeakyRelu, v, Type::Float, Some(Type::Float)).is_err()
    );
    let ints = Type::Tensor(TensorType::I64_CPU_1D);
    assert!(typing::param_unary(ParamUnaryOp::LeakyRelu, ints, Type::Float, None).is_err());
}

/// The scalar-parameter ops compute eager's formulas per element (`ParamUnaryOp::apply`),
/// checked here against the formulas ATen's kernels state; the runtime tests check them
/// against ATen itself.
#[test]
fn param_unary_apply_follows_eagers_kernels() {
    use rextio_ir::ParamUnaryOp;
    let bits = |v: Option<f32>| v.map(f32::to_bits);
    let nan = f32::NAN;
    // leaky_relu: `x > 0 ? x : x * slope`.
    assert_eq!(
        bits(ParamUnaryOp::LeakyRelu.apply(-0.0, 0.2, 0.0)),
        Some((-0.0f32).to_bits())
    );
    assert_eq!(ParamUnaryOp::LeakyRelu.apply(-2.0, 0.25, 0.0), Some(-0.5));
    assert!(ParamUnaryOp::LeakyRelu
        .apply(nan, 0.2, 0.0)
        .unwrap()
        .is_nan());
    assert_eq!(
        ParamUnaryOp::LeakyRelu.apply(f32::INFINITY, nan, 0.0),
        Some(f32::INFINITY)
    );
    // ELU is ATen's only.
    assert_eq!(ParamUnaryOp::Elu.apply(1.0, 1.0, 0.0), None);
    // clamp: NaN stays NaN, -0.0 stays -0.0 against a 0.0 bound, lo > hi gives hi.
    assert!(ParamUnaryOp::Clamp.apply(nan, -1.0, 1.0).unwrap().is_nan());
    assert_eq!(
        bits(ParamUnaryOp::Clamp.apply(-0.0, 0.0, 6.0)),
        Some((-0.0f32).to_bits())
    );
    assert_eq!(
        bits(ParamUnaryOp::ClampMax.apply(0.0, -0.0, 0.0)),
        Some(0.0f32.to_bits())
    );
    assert_eq!(ParamUnaryOp::Clamp.apply(-5.0, 2.0, 1.0), Some(1.0));
    assert_eq!(
        ParamUnaryOp::Hardtanh.apply(f32::NEG_INFINITY, -1.0, 1.0),
        Some(-1.0)
    );
    assert_eq!(ParamUnaryOp::ClampMin.apply(-3.0, -1.0, 0.0), Some(-1.0));
    assert_eq!(ParamUnaryOp::ClampMax.apply(3.0, 1e-45, 0.0), Some(1e-45));
}

#[test]
fn joins_round_trip_and_type() {
    use rextio_ir::{typing, JoinKind, TensorType};
    let text = "fn f(%a: tensor<f32, cpu, 2>, %b: tensor<f32, cpu, 2>) -> tensor<f32, cpu, 2> {\n  %0: tensor<f32, cpu, 2> = param 0\n  %1: tensor<f32, cpu, 2> = param 1\n  %2: tensor<f32, cpu, 2> = cat %0, %1, %0, dim=1\n  return %2\n}\n";
    let f = parse_function(text).expect("parses");
    assert_eq!(
        f.exprs.values().last().map(|e| e.kind.operands().len()),
        Some(3)
    );
    assert_eq!(print_function(&f), text);
    assert_round_trip(&f);
    // A join needs its parts and its dim.
    for bad in [
        text.replace("cat %0, %1, %0, dim=1", "cat dim=1"),
        text.replace("cat %0, %1, %0, dim=1", "cat %0, %1"),
        text.replace("cat %0, %1, %0, dim=1", "cat %0, %1, keepdim=1"),
        text.replace("cat %0, %1, %0, dim=1", "stack %0, %1, dim=-1"),
    ] {
        assert!(parse_function(&bad).is_err(), "{bad}");
    }
    // Typing (invariant 10).
    let m = F32_2D;
    let v = Type::Tensor(TensorType::F32_CPU_1D);
    let join = |kind, parts: &[Type], dim| typing::join(kind, parts.iter().copied(), dim);
    assert_eq!(join(JoinKind::Cat, &[m, m, m], 1), Ok(m));
    assert_eq!(join(JoinKind::Cat, &[v], 0), Ok(v));
    assert_eq!(join(JoinKind::Stack, &[v, v], 0), Ok(m));
    assert_eq!(join(JoinKind::Stack, &[v, v], 1), Ok(m));
    let error = |kind, parts: &[Type], dim| match join(kind, parts, dim) {
        Err(e) => e.to_string(),
        Ok(ty) => panic!("{kind} of {parts:?} over {dim} typed {ty}"),
    };
    assert!(error(JoinKind::Cat, &[], 0).contains("no tensors"));
    assert!(error(JoinKind::Cat, &[m, v], 0).contains("mixes ranks"));
    assert!(error(JoinKind::Cat, &[m, m], 2).contains("out of range"));
    assert!(error(JoinKind::Cat, &[v, v], 1).contains("out of range"));
    assert!(error(JoinKind::Stack, &[v, v], 2).contains("out of range"));
    let s = Type::Tensor(TensorType::F32_CPU_0D);
    let t = Type::Tensor(TensorType::F32_CPU_3D);
    assert_eq!(join(JoinKind::Stack, &[s, s, s], 0), Ok(v));
    assert_eq!(join(JoinKind::Stack, &[m, m], 2), Ok(t));
    assert_eq!(join(JoinKind::Cat, &[t, t], 2), Ok(t));
    assert!(error(JoinKind::Stack, &[t, t], 0).contains("rank 4"));
    assert!(error(JoinKind::Cat, &[s, s], 0).contains("out of range for rank 0"));
    let l = Type::Tensor(TensorType::I64_CPU_1D);
    assert!(error(JoinKind::Cat, &[v, l], 0).contains("float32"));
    assert!(error(JoinKind::Cat, &[v, Type::Int], 0).contains("float32"));
    let cuda = Type::Tensor(TensorType::F32_CUDA0_2D);
    assert!(error(JoinKind::Cat, &[m, cuda], 0).contains("devices"));
}

#[test]
fn scalar_math_ops_round_trip_and_type() {
    use rextio_ir::{typing, Param, ScalarUnaryOp};
    let params = vec![
        Param {
            name: "x".to_string(),
            ty: F32_2D,
        },
        Param {
            name: "v".to_string(),
            ty: Type::Float,
        },
        Param {
            name: "n".to_string(),
            ty: Type::Int,
        },
    ];
    let mut f = Function::new("math", params, Type::Float);
    f.push_let(ExprKind::Param(0), F32_2D);
    let v = f.push_let(ExprKind::Param(1), Type::Float);
    let n = f.push_let(ExprKind::Param(2), Type::Int);
    let mut last = v;
    for op in ScalarUnaryOp::ALL {
        if op.math_name().is_none() {
            continue;
        }
        for input in [v, n] {
            let ty = typing::scalar_unary(op, f.exprs[input].ty).unwrap();
            let id = f.push_let(ExprKind::ScalarUnary { op, input }, ty);
            if ty == Type::Float {
                last = id;
            }
        }
    }
    f.body.stmts.push(Stmt::Return(last));
    assert_round_trip(&f);
    let text = print_function(&f);
    for line in [
        "%3: float = scalar.sqrt %1",
        "%4: float = scalar.sqrt %2",
        "= scalar.exp %",
        "= scalar.log %",
        "= scalar.tanh %",
        "%11: int = scalar.floor %1",
        "%14: int = scalar.ceil %2",
        "%16: float = scalar.fabs %2",
    ] {
        assert!(text.contains(line), "missing `{line}` in\n{text}");
    }
    // Typing: floor and ceil are ints, the others floats; never of a tensor.
    assert_eq!(
        typing::scalar_unary(ScalarUnaryOp::Floor, Type::Float),
        Ok(Type::Int)
    );
    assert_eq!(
        typing::scalar_unary(ScalarUnaryOp::Sqrt, Type::Bool),
        Ok(Type::Float)
    );
    assert!(typing::scalar_unary(ScalarUnaryOp::Exp, F32_2D).is_err());
    // One operand too many is a parse error naming the op.
    let bad = text.replace("= scalar.sqrt %1", "= scalar.sqrt %1, %2");
    assert!(parse_function(&bad).is_err());
}

#[test]
fn views_round_trip_and_type() {
    use rextio_ir::{typing, TensorType, ViewKind};
    let text = "fn f(%a: tensor<f32, cpu, 2>) -> tensor<f32, cpu, 2> {\n  %0: tensor<f32, cpu, 2> = param 0\n  %1: int = size %0, dim=1\n  %2: int = const.int -1\n  %3: tensor<f32, cpu, 2> = transpose %0\n  %4: tensor<f32, cpu, 2> = reshape %3, %1, %2\n  %5: tensor<f32, cpu, 1> = view %4, %2\n  %6: tensor<f32, cpu, 1> = flatten %4\n  %7: tensor<f32, cpu, 2> = unsqueeze %6, dim=0\n  %8: tensor<f32, cpu, 1> = squeeze %7, dim=0\n  %9: tensor<f32, cpu, 2> = unsqueeze %8, dim=1\n  return %9\n}\n";
    let f = parse_function(text).expect("parses");
    assert_eq!(print_function(&f), text);
    assert_round_trip(&f);
    for bad in [
        text.replace("transpose %0", "transpose %0, %1"),
        text.replace("squeeze %7, dim=0", "squeeze %7"),
        text.replace("size %0, dim=1", "size %0"),
    ] {
        assert!(parse_function(&bad).is_err(), "{bad}");
    }
    // Typing (invariant 11).
    let m = F32_2D;
    let v = Type::Tensor(TensorType::F32_CPU_1D);
    let view = |kind, x, sizes: &[Type], dim| typing::view(kind, x, sizes.iter().copied(), dim);
    assert_eq!(view(ViewKind::Transpose, m, &[], 0), Ok(m));
    assert_eq!(view(ViewKind::Reshape, m, &[Type::Int], 0), Ok(v));
    assert_eq!(view(ViewKind::View, v, &[Type::Int, Type::Int], 0), Ok(m));
    assert_eq!(
        view(ViewKind::Reshape, m, &[Type::Int; 3], 0),
        Ok(Type::Tensor(TensorType::F32_CPU_3D))
    );
    assert!(view(ViewKind::Reshape, m, &[Type::Int; 4], 0).is_err());
    assert!(view(ViewKind::Reshape, m, &[Type::Float], 0).is_err());
    assert!(view(ViewKind::Reshape, m, &[], 0).is_err());
    assert_eq!(view(ViewKind::Flatten, m, &[], 0), Ok(v));
    assert_eq!(view(ViewKind::Unsqueeze, v, &[], 1), Ok(m));
    assert!(view(ViewKind::Unsqueeze, v, &[], 2).is_err());
    assert!(view(ViewKind::Unsqueeze, m, &[], 0).is_err());
    assert_eq!(view(ViewKind::Squeeze, m, &[], 1), Ok(v));
    assert!(view(ViewKind::Squeeze, v, &[], 0).is_err());
    assert_eq!(typing::size(m, 1), Ok(Type::Int));
    assert!(typing::size(v, 1).is_err());
}

#[test]
fn elementwise_ops_round_trip_and_type() {
    use rextio_ir::{typing, CompareOp, ElementwiseOp, TensorType};
    let text = "fn f(%a: tensor<f32, cpu, 2>, %v: tensor<f32, cpu, 1>, %s: float) -> tensor<f32, cpu, 2> {\n  %0: tensor<f32, cpu, 2> = param 0\n  %1: tensor<f32, cpu, 1> = param 1\n  %2: float = param 2\n  %3: tensor<f32, cpu, 2> = maximum %0, %1\n  %4: tensor<f32, cpu, 2> = pow %3, %2\n  %5: tensor<f32, cpu, 2> = where_ge %2, %4, %1, %2\n  %6: tensor<f32, cpu, 2> = minimum %5, %0\n  return %6\n}\n";
    let f = parse_function(text).expect("parses");
    assert_eq!(print_function(&f), text);
    assert_round_trip(&f);
    for op in ElementwiseOp::ALL {
        assert_eq!(ElementwiseOp::from_name(op.name()), Some(op));
    }
    // Each op takes its arity.
    for bad in [
        text.replace("maximum %0, %1", "maximum %0"),
        text.replace("where_ge %2, %4, %1, %2", "where_ge %2, %4, %1"),
        text.replace("pow %3, %2", "pow %3, %2, %2"),
    ] {
        assert!(parse_function(&bad).is_err(), "{bad}");
    }
    // Typing (invariant 12).
    let m = F32_2D;
    let v = Type::Tensor(TensorType::F32_CPU_1D);
    let (i, x) = (Type::Int, Type::Float);
    let ty = |op, operands: &[Type]| typing::elementwise(op, operands.iter().copied());
    let gt = ElementwiseOp::Where(CompareOp::Gt);
    assert_eq!(ty(gt, &[v, i, m, x]), Ok(m));
    assert_eq!(ty(gt, &[x, v, v, i]), Ok(v));
    assert_eq!(ty(ElementwiseOp::Maximum, &[v, v]), Ok(v));
    assert_eq!(ty(ElementwiseOp::Pow, &[m, i]), Ok(m));
    let error = |op, operands: &[Type]| match ty(op, operands) {
        Err(e) => e.to_string(),
        Ok(t) => panic!("{op} of {operands:?} typed {t}"),
    };
    assert!(error(gt, &[i, x, m, m]).contains("compares no tensor"));
    assert!(error(gt, &[m, x, i, i]).contains("two ints"));
    assert!(error(gt, &[m, x, m]).contains("takes 4 operands"));
    assert!(error(ElementwiseOp::Maximum, &[m, x]).contains("float32"));
    assert!(error(ElementwiseOp::Pow, &[x, m]).contains("float32"));
    assert!(error(gt, &[m, Type::Bool, m, m]).contains("float32"));
    let cuda = Type::Tensor(TensorType::F32_CUDA0_2D);
    assert!(error(ElementwiseOp::Minimum, &[m, cuda]).contains("devices"));
    // The comparison's eager semantics: NaN unequal, -0.0 equal to 0.0; sides swap.
    assert!(CompareOp::Ne.holds(f32::NAN, f32::NAN) && !CompareOp::Eq.holds(f32::NAN, f32::NAN));
    assert!(CompareOp::Eq.holds(-0.0, 0.0));
    for op in CompareOp::ALL {
        assert_eq!(op.swapped().swapped(), op);
        assert_eq!(op.holds(1.0, 2.0), op.swapped().holds(2.0, 1.0));
    }
}

#[test]
fn dim_ops_round_trip_and_type() {
    use rextio_ir::{typing, ExtremumOp, FillKind, TensorType};
    let text = "fn f(%a: tensor<f32, cpu, 2>, %i: tensor<i64, cpu, 1>, %s: float) -> tensor<f32, cpu, 2> {\n  %0: tensor<f32, cpu, 2> = param 0\n  %1: tensor<i64, cpu, 1> = param 1\n  %2: float = param 2\n  %3: tensor<f32, cpu, 1> = max_values %0, dim=1, keepdim=false\n  %4: tensor<i64, cpu, 1> = min_indices %0, dim=0, keepdim=false\n  %5: tensor<f32, cpu, 2> = index_select %0, %1, dim=0\n  %6: tensor<f32, cpu, 2> = normalize %5, p=2.0, dim=1, eps=1e-12\n  %7: tensor<f32, cpu, 2> = full_like %6, %2\n  %8: tensor<f32, cpu, 2> = zeros_like %7\n  %9: tensor<f32, cpu, 2> = ones_like %8\n  %10: tensor<f32, cpu, 2> = max_values %9, dim=0, keepdim=true\n  return %10\n}\n";
    let f = parse_function(text).expect("parses");
    assert_eq!(print_function(&f), text);
    assert_round_trip(&f);
    for op in ExtremumOp::ALL {
        assert_eq!(ExtremumOp::from_name(op.name()), Some(op));
        assert_eq!(ExtremumOp::of(op.is_max(), op.is_indices()), op);
    }
    for kind in FillKind::ALL {
        assert_eq!(FillKind::from_name(kind.name()), Some(kind));
    }
    // Each op takes its operands and attributes.
    for bad in [
        text.replace("full_like %6, %2", "full_like %6"),
        text.replace("zeros_like %7", "zeros_like %7, %2"),
        text.replace("index_select %0, %1, dim=0", "index_select %0, dim=0"),
        text.replace("p=2.0, dim=1, eps=1e-12", "dim=1, eps=1e-12"),
        text.replace("dim=1, keepdim=false", "dim=1"),
    ] {
        assert!(parse_function(&bad).is_err(), "{bad}");
    }
    // Typing (invariant 14).
    let m = F32_2D;
    let v = Type::Tensor(TensorType::F32_CPU_1D);
    let l = Type::Tensor(TensorType::I64_CPU_1D);
    let cuda = Type::Tensor(TensorType::F32_CUDA0_2D);
    assert_eq!(typing::extremum(ExtremumOp::MaxValues, m, 1, false), Ok(v));
    assert_eq!(typing::extremum(ExtremumOp::MinIndices, m, 0, false), Ok(l));
    assert_eq!(typing::extremum(ExtremumOp::MaxValues, v, 0, true), Ok(v));
    assert!(typing::extremum(ExtremumOp::MaxValues, v, 0, false).is_err());
    assert!(typing::extremum(ExtremumOp::MaxValues, m, 2, false).is_err());
    assert!(typing::extremum(ExtremumOp::MaxIndices, l, 0, true).is_err());
    assert_eq!(typing::fill_like(FillKind::Full, m, Some(Type::Int)), Ok(m));
    assert_eq!(typing::fill_like(FillKind::Zeros, v, None), Ok(v));
    assert!(typing::fill_like(FillKind::Full, m, None).is_err());
    assert!(typing::fill_like(FillKind::Ones, m, Some(Type::Float)).is_err());
    assert!(typing::fill_like(FillKind::Full, m, Some(Type::Bool)).is_err());
    assert!(typing::fill_like(FillKind::Zeros, l, None).is_err());
    assert_eq!(typing::index_select(m, l, 1), Ok(m));
    assert!(typing::index_select(m, v, 0).is_err());
    assert!(typing::index_select(v, l, 1).is_err());
    assert!(typing::index_select(cuda, l, 0).is_err());
    assert_eq!(typing::normalize(v, 0), Ok(v));
    assert!(typing::normalize(v, 1).is_err());
    assert!(typing::normalize(l, 0).is_err());
}

/// Rank-3 types (the extended surface's `TensorF32Cpu3D`) print, parse and type: a batched
/// product, a broadcast product, a rank-3 transpose of dims 1 and 2 (`dim=1`, written only
/// where it is not 0), softmax over the last dim, a linear of a rank-3 input, a reshape back
/// to rank 2.
#[test]
fn rank3_round_trip_and_type() {
    use rextio_ir::{typing, TensorType, ViewKind};
    let text = "fn attention(%q: tensor<f32, cpu, 3>, %w: tensor<f32, cpu, 2>) -> tensor<f32, cpu, 2> {\n  %0: tensor<f32, cpu, 3> = param 0\n  %1: tensor<f32, cpu, 2> = param 1\n  %2: tensor<f32, cpu, 3> = transpose %0, dim=1\n  %3: tensor<f32, cpu, 3> = transpose %0\n  %4: tensor<f32, cpu, 3> = matmul %0, %2\n  %5: tensor<f32, cpu, 3> = softmax %4, dim=2\n  %6: tensor<f32, cpu, 3> = matmul %5, %1\n  %7: tensor<f32, cpu, 3> = linear %6, %1\n  %8: int = size %7, dim=2\n  %9: int = const.int -1\n  %10: tensor<f32, cpu, 2> = reshape %7, %9, %8\n  return %10\n}\n";
    let f = parse_function(text).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(print_function(&f), text);
    assert_round_trip(&f);
    let t3 = Type::Tensor(TensorType::F32_CPU_3D);
    let m = F32_2D;
    let v = Type::Tensor(TensorType::F32_CPU_1D);
    assert_eq!(typing::matmul(t3, t3), Ok(t3));
    assert_eq!(typing::matmul(t3, m), Ok(t3));
    assert_eq!(typing::matmul(m, t3), Ok(t3));
    assert!(typing::matmul(t3, v).is_err());
    assert_eq!(typing::view(ViewKind::Transpose, t3, [], 1), Ok(t3));
    assert!(typing::view(ViewKind::Transpose, t3, [], 2).is_err());
    assert!(typing::view(ViewKind::Transpose, m, [], 1).is_err());
    assert_eq!(typing::linear(t3, m, Some(v)), Ok(t3));
    assert!(typing::fused_linear(t3, m, None, [], None, None).is_err());
}

/// A fused op's residual: a float32 matrix, and no tail beside it.
#[test]
fn fused_residual_typing() {
    use rextio_ir::{typing, FusedTail, SoftmaxKind, TensorType};
    let m = F32_2D;
    let v = Type::Tensor(TensorType::F32_CPU_1D);
    let t3 = Type::Tensor(TensorType::F32_CPU_3D);
    let f64m = Type::Tensor(TensorType::F32_CPU_2D.with_dtype(rextio_ir::DType::F64));
    assert_eq!(
        typing::fused_linear(m, m, Some(v), [], None, Some(m)),
        Ok(m)
    );
    for residual in [v, t3, f64m, Type::Float] {
        assert!(typing::fused_linear(m, m, Some(v), [], None, Some(residual)).is_err());
    }
    let softmax = Some(FusedTail::Softmax {
        kind: SoftmaxKind::Softmax,
        dim: 1,
    });
    let e = typing::fused_linear(m, m, None, [], softmax, Some(m)).unwrap_err();
    assert!(e.to_string().contains("no tail"), "{e}");
}

/// `residual=` reads `left` or `right`, and its operand ends the operand list.
#[test]
fn fused_residual_text_errors() {
    let head = "fn f(%x: tensor<f32, cpu, 2>, %w: tensor<f32, cpu, 2>) -> tensor<f32, cpu, 2> {\n  %0: tensor<f32, cpu, 2> = param 0\n  %1: tensor<f32, cpu, 2> = param 1\n";
    let bad_side = format!("{head}  %2: tensor<f32, cpu, 2> = fused_linear %0, %1, %0, activations=[], tail=none, residual=up\n  return %2\n}}\n");
    let e = parse_function(&bad_side).unwrap_err();
    assert!(e.to_string().contains("`left` or `right`"), "{e}");
    let missing = format!("{head}  %2: tensor<f32, cpu, 2> = fused_linear %0, activations=[], tail=none, residual=left\n  return %2\n}}\n");
    let e = parse_function(&missing).unwrap_err();
    assert!(e.to_string().contains("the residual"), "{e}");
}

/// The extended surface's float64 and bfloat16 tensors: `f64` and `bf16` in the text form,
/// round-tripped through the printer and parser.
#[test]
fn float64_and_bfloat16_types_round_trip() {
    let text = "\
fn f(%x: tensor<f64, cpu, 2>, %w: tensor<f64, cpu, 2>, %b: tensor<f64, cpu, 1>, %h: tensor<bf16, cpu, 2>) -> tensor<f64, cpu, 1> {
  %0: tensor<f64, cpu, 2> = param 0
  %1: tensor<f64, cpu, 2> = param 1
  %2: tensor<f64, cpu, 1> = param 2
  %3: tensor<bf16, cpu, 2> = param 3
  %4: tensor<f64, cpu, 2> = linear %0, %1, %2
  %5: tensor<f64, cpu, 2> = relu %4
  %6: tensor<f64, cpu, 1> = sum %5, dim=1, keepdim=false
  %7: tensor<bf16, cpu, 2> = softmax %3, dim=1
  return %6
}
";
    let f = parse_function(text).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(print_function(&f), text);
    assert_round_trip(&f);
    let error = parse_error(&text.replace(
        "tensor<bf16, cpu, 2> = param 3",
        "tensor<f16, cpu, 2> = param 3",
    ));
    assert!(
        error
            .to_string()
            .contains("unknown dtype `f16` (expected `f32`, `i64`, `f64` or `bf16`)"),
        "{error}"
    );
}

/// `fused_attention` round-trips with and without its scale, and is typed as attention.
#[test]
fn fused_attention_round_trips() {
    let text = "fn attention(%q: tensor<f32, cpu, 3>, %k: tensor<f32, cpu, 3>, %v: tensor<f32, cpu, 3>, %c: float) -> tensor<f32, cpu, 3> {\n  %0: tensor<f32, cpu, 3> = param 0\n  %1: tensor<f32, cpu, 3> = param 1\n  %2: tensor<f32, cpu, 3> = param 2\n  %3: float = param 3\n  %4: tensor<f32, cpu, 3> = fused_attention %0, %1, %2, %3, scale=div\n  %5: tensor<f32, cpu, 3> = fused_attention %4, %1, %2, %3, scale=mul\n  %6: tensor<f32, cpu, 3> = fused_attention %5, %1, %2, scale=none\n  return %6\n}\n";
    let f = parse_function(text).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(print_function(&f), text);
    assert_round_trip(&f);
    for (bad, needle) in [
        (
            "scale=none\n  return %6",
            "fused_attention %5, %1, %2, %3, scale=none\n  return %6",
        ),
        (
            "scale=div\n  %5",
            "fused_attention %0, %1, %2, scale=div\n  %5",
        ),
        (
            "scale=sqrt\n  %5",
            "fused_attention %0, %1, %2, %3, scale=sqrt\n  %5",
        ),
    ] {
        let broken = text.replace(
            match bad {
                "scale=none\n  return %6" => "fused_attention %5, %1, %2, scale=none\n  return %6",
                _ => "fused_attention %0, %1, %2, %3, scale=div\n  %5",
            },
            needle,
        );
        assert!(parse_function(&broken).is_err(), "{broken}");
    }
    use rextio_ir::{typing, TensorScalarOp, TensorType};
    let t3 = Type::Tensor(TensorType::F32_CPU_3D);
    assert_eq!(typing::fused_attention(t3, t3, t3, None), Ok(t3));
    assert!(typing::fused_attention(t3, F32_2D, t3, None).is_err());
    assert!(typing::fused_attention(t3, t3, t3, Some((TensorScalarOp::Add, Type::Float))).is_err());
    assert!(typing::fused_attention(t3, t3, t3, Some((TensorScalarOp::Div, t3))).is_err());
}

/// float64 and bfloat16 at ranks 0 and 3 (the extended surface's `TensorF64Cpu0D`/`3D`,
/// `TensorBF16Cpu0D`/`3D`): every float CPU rank has its marker, none of them the
/// reference's; the ops ATen computes at any float dtype type at one dtype (batched and
/// broadcast products, `bmm`, softmax, a rank-3 linear, whole reductions to rank 0, `item`,
/// a tensor condition), mixed dtypes do not, and the fused attention (a float32 kernel) takes
/// float32 only.
#[test]
fn float64_and_bfloat16_ranks_0_and_3_type() {
    use rextio_ir::{
        typing, CompareOp, DType, Marker, SoftmaxKind, TensorScalarOp, TensorType, ToScalarKind,
        WholeReduceOp,
    };
    for (dtype, prefix) in [(DType::F64, "TensorF64Cpu"), (DType::BF16, "TensorBF16Cpu")] {
        for rank in 0..=3 {
            let ty = TensorType::F32_CPU_1D.with_rank(rank).with_dtype(dtype);
            let marker = ty.marker().unwrap_or_else(|| panic!("no marker for {ty}"));
            assert_eq!(marker.name, format!("{prefix}{rank}D"));
            assert!(!marker.reference, "{}", marker.name);
            assert_eq!(Marker::by_key(marker.key), Some(marker));
        }
    }
    assert_eq!(Marker::of(TensorType::F64_CPU_0D).name, "TensorF64Cpu0D");
    assert_eq!(
        Marker::of(TensorType::BF16_CPU_3D).key,
        "rextio-torch/tensor-bf16-cpu-3d"
    );
    for dtype in [DType::F64, DType::BF16] {
        let t = |rank: u8| Type::Tensor(TensorType::F32_CPU_3D.with_dtype(dtype).with_rank(rank));
        let (s, v, m, t3) = (t(0), t(1), t(2), t(3));
        assert_eq!(typing::bmm(t3, t3), Ok(t3));
        assert_eq!(typing::matmul(t3, t3), Ok(t3));
        assert_eq!(typing::matmul(t3, m), Ok(t3));
        assert_eq!(typing::matmul(m, t3), Ok(t3));
        assert_eq!(typing::softmax(SoftmaxKind::Softmax, t3, 2), Ok(t3));
        assert_eq!(typing::linear(t3, m, Some(v)), Ok(t3));
        assert_eq!(typing::reduce_all(WholeReduceOp::Sum, t3), Ok(s));
        assert_eq!(typing::reduce_all(WholeReduceOp::Amax, m), Ok(s));
        assert_eq!(typing::to_scalar(ToScalarKind::Item, s), Ok(Type::Float));
        assert_eq!(
            typing::tensor_truth(CompareOp::Gt, s, Type::Float),
            Ok(Type::Bool)
        );
        assert_eq!(typing::tensor_truth(CompareOp::Lt, s, s), Ok(Type::Bool));
        assert_eq!(
            typing::tensor_scalar(TensorScalarOp::Div, t3, Type::Float),
            Ok(t3)
        );
        let f32_3 = Type::Tensor(TensorType::F32_CPU_3D);
        let f32_0 = Type::Tensor(TensorType::F32_CPU_0D);
        assert!(typing::bmm(t3, f32_3).is_err());
        assert!(typing::matmul(f32_3, t3).is_err());
        assert!(typing::tensor_truth(CompareOp::Gt, s, f32_0).is_err());
        assert!(typing::fused_attention(t3, t3, t3, None).is_err());
        assert!(typing::fused_linear(t3, m, None, [], None, None).is_err());
    }
}
