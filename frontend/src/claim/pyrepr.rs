//! Python `repr()` of the few value shapes that appear in reference diagnostics: strings,
//! tuples of strings, ints and the static literals of a [`Literal`]. Messages are a byte-exact
//! contract, so quoting and escaping follow CPython.

use super::Literal;

/// `repr(s)` for a Python `str`: single quotes unless the text contains `'` and no `"`.
pub fn str_repr(s: &str) -> String {
    let quote = if s.contains('\'') && !s.contains('"') {
        '"'
    } else {
        '\''
    };
    let mut out = String::with_capacity(s.len() + 2);
    out.push(quote);
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if c == quote => {
                out.push('\\');
                out.push(c);
            }
            c if (c as u32) < 0x20 || (0x7f..=0xa0).contains(&(c as u32)) => {
                out.push_str(&format!("\\x{:02x}", c as u32));
            }
            c => out.push(c),
        }
    }
    out.push(quote);
    out
}

/// `repr(tuple)` given the items' reprs: `()`, `(a,)`, `(a, b)`.
pub fn tuple_repr(items: &[String]) -> String {
    match items {
        [] => "()".to_string(),
        [one] => format!("({one},)"),
        _ => format!("({})", items.join(", ")),
    }
}

/// `repr` of a tuple of strings, e.g. `('a', 'b')`.
pub fn str_tuple_repr(items: &[&str]) -> String {
    let items: Vec<String> = items.iter().map(|s| str_repr(s)).collect();
    tuple_repr(&items)
}

/// `repr` of a literal's value. A non-literal has no value; it renders as `<non-literal>`
/// (the lanes only print values they have proved literal).
pub fn literal_repr(literal: &Literal) -> String {
    match literal {
        Literal::NonLiteral => "<non-literal>".to_string(),
        Literal::Int(value) => value.to_string(),
        Literal::None => "None".to_string(),
        Literal::IntTuple(values) => {
            let items: Vec<String> = values.iter().map(|v| v.to_string()).collect();
            tuple_repr(&items)
        }
        Literal::Bool(true) => "True".to_string(),
        Literal::Bool(false) => "False".to_string(),
        Literal::Str(text) => str_repr(text),
        Literal::Float(bits) => float_repr(bits.value()),
    }
}

/// `repr` of a Python float, close enough for messages (`0.5`, `1e-05`, `inf`, `nan`).
pub fn float_repr(value: f64) -> String {
    if value.is_nan() {
        "nan".to_string()
    } else if value.is_infinite() {
        if value > 0.0 { "inf" } else { "-inf" }.to_string()
    } else if value != 0.0 && (value.abs() < 1e-4 || value.abs() >= 1e16) {
        // Python writes a two-digit exponent at least (`1e-05`).
        let text = format!("{value:e}");
        match text.split_once('e') {
            Some((mantissa, exp)) => {
                let (sign, digits) = match exp.strip_prefix('-') {
                    Some(d) => ("-", d),
                    None => ("+", exp),
                };
                format!("{mantissa}e{sign}{digits:0>2}")
            }
            None => text,
        }
    } else {
        format!("{value:?}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strings_quote_like_cpython() {
        assert_eq!(str_repr("x.sum"), "'x.sum'");
        assert_eq!(str_repr("it's"), "\"it's\"");
        assert_eq!(str_repr("'\""), "'\\'\"'");
        assert_eq!(str_repr("a\\b\n"), "'a\\\\b\\n'");
        assert_eq!(str_repr("\u{1}"), "'\\x01'");
    }

    #[test]
    fn tuples_and_literals() {
        assert_eq!(str_tuple_repr(&[]), "()");
        assert_eq!(str_tuple_repr(&["a"]), "('a',)");
        assert_eq!(str_tuple_repr(&["a", "b", "c"]), "('a', 'b', 'c')");
        assert_eq!(literal_repr(&Literal::Int(-2)), "-2");
        assert_eq!(literal_repr(&Literal::Bool(true)), "True");
        assert_eq!(literal_repr(&Literal::None), "None");
        assert_eq!(literal_repr(&Literal::IntTuple(vec![1])), "(1,)");
        assert_eq!(literal_repr(&Literal::IntTuple(vec![0, 1])), "(0, 1)");
        assert_eq!(literal_repr(&Literal::Str("none".into())), "'none'");
    }
}
