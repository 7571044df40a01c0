//! The SVG writer: placed [`Item`]s become one `<rect>` and its `<text>` lines each, in
//! arena order (parents under their children), with the box's facts as data
//! attributes so tests and scripts can read the picture back: `data-kind`,
//! `data-name`, `data-id` (its index), `data-parent` (its parent's), `data-min` and
//! `data-max` (a device's or a swatch's distance), `data-mark` on what the distances
//! are measured from. Only what resvg and browsers read alike: presentation attributes,
//! no CSS, no scripts, no external references; text is 12-pixel monospace.
//!
//! Also the palette: a fixed scale from green (nearest) to red (farthest), indexed by
//! a distance's rank among the distinct distances of the picture ([`colour`]).

use std::fmt::Write as _;

use super::layout::{Item, LINE, PAD, TEXT_TOP};

/// The distance scale, nearest first (ColorBrewer's RdYlGn, reversed).
pub(super) const PALETTE: [&str; 8] = [
    "#1a9850", "#66bd63", "#a6d96a", "#d9ef8b", "#fee08b", "#fdae61", "#f46d43", "#d73027",
];

/// The fill of a device without a distance (none was answered for it).
pub(super) const NO_DISTANCE: &str = "#cccccc";

/// The colour of the distance of rank `rank` (0 the nearest) among `count` distinct
/// distances: the ranks spread evenly over [`PALETTE`], the nearest always green and,
/// from two distances on, the farthest always red; up to 8 distances get 8 colours,
/// more share them in rank order.
pub(super) fn colour(rank: usize, count: usize) -> &'static str {
    let last = PALETTE.len() - 1;
    if count <= 1 {
        return PALETTE[0];
    }
    let k = count - 1;
    PALETTE[((rank.min(k) * last + k / 2) / k).min(last)]
}

/// The font: the first of these the viewer (or the PNG renderer) has.
const FONT: &str = "DejaVu Sans Mono, Menlo, Consolas, Liberation Mono, monospace";

/// `s` with `&`, `<`, `>`, `"` and `'` escaped, and control characters dropped (XML
/// 1.0 allows none but tab, newline and carriage return).
pub(super) fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            c if c.is_control() => {}
            c => out.push(c),
        }
    }
    out
}

/// The SVG of `items`, placed by [`place`](super::layout::place) in a picture of
/// `width` × `height` pixels, titled `title`.
pub(super) fn write(items: &[Item], width: i32, height: i32, title: &str) -> String {
    let mut out = String::with_capacity(items.len() * 300 + 500);
    // Infallible: writing to a String.
    let _ = writeln!(
        out,
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{width}\" height=\"{height}\" \
         viewBox=\"0 0 {width} {height}\" font-family=\"{FONT}\" font-size=\"12\">"
    );
    let _ = writeln!(out, "<title>{}</title>", escape(title));
    let _ = writeln!(
        out,
        "<rect width=\"{width}\" height=\"{height}\" fill=\"#ffffff\"/>"
    );
    for (i, it) in items.iter().enumerate() {
        out.push_str("<g>");
        if let Some(tip) = &it.tip {
            let _ = write!(out, "<title>{}</title>", escape(tip));
        }
        let (stroke, stroke_width) = if it.mark {
            ("#1f4e9c", 3)
        } else {
            ("#555555", 1)
        };
        let _ = write!(
            out,
            "<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" rx=\"3\" fill=\"{}\" \
             stroke=\"{stroke}\" stroke-width=\"{stroke_width}\" data-kind=\"{}\" \
             data-name=\"{}\" data-id=\"{i}\"",
            it.x,
            it.y,
            it.w,
            it.h,
            it.fill,
            it.kind.name(),
            escape(&it.name),
        );
        if let Some(p) = it.parent {
            let _ = write!(out, " data-parent=\"{p}\"");
        }
        if let Some((min, max)) = it.dist {
            let _ = write!(out, " data-min=\"{min}\" data-max=\"{max}\"");
        }
        if it.mark {
            out.push_str(" data-mark=\"origin\"");
        }
        out.push_str("/>");
        for (k, line) in (1..).zip(&it.lines) {
            let _ = write!(
                out,
                "<text x=\"{}\" y=\"{}\" fill=\"#000000\">{}</text>",
                it.x + PAD,
                it.y + TEXT_TOP + k * LINE - 4,
                escape(line)
            );
        }
        out.push_str("</g>\n");
    }
    out.push_str("</svg>\n");
    out
}

#[cfg(test)]
mod tests {
    use super::super::layout::{Kind, place, push};
    use super::*;

    #[test]
    fn ranks_spread_from_green_to_red() {
        assert_eq!(colour(0, 1), PALETTE[0]);
        assert_eq!((colour(0, 2), colour(1, 2)), (PALETTE[0], PALETTE[7]));
        let three: Vec<_> = (0..3).map(|r| colour(r, 3)).collect();
        assert_eq!(three, [PALETTE[0], PALETTE[4], PALETTE[7]]);
        // Up to eight distances, eight colours, in order.
        for n in 2..=8 {
            let v: Vec<usize> = (0..n)
                .map(|r| PALETTE.iter().position(|&c| c == colour(r, n)).unwrap())
                .collect();
            assert!(v.windows(2).all(|w| w[0] < w[1]), "{n}: {v:?}");
            assert_eq!((v[0], v[n - 1]), (0, 7));
        }
        assert_eq!(colour(19, 20), PALETTE[7]);
    }

    #[test]
    fn text_and_attributes_are_escaped_and_boxes_carry_their_facts() {
        assert_eq!(escape("a<b>&\"c'\u{1}"), "a&lt;b&gt;&amp;&quot;c&apos;");
        let mut items = Vec::new();
        let m = push(
            &mut items,
            None,
            Item::new(Kind::Machine, "m".into(), vec!["M <x>".into()], "#ffffff"),
        );
        let mut dev = Item::new(Kind::Device, "e&0".into(), vec!["e&0".into()], "#1a9850");
        dev.dist = Some((16, 33));
        dev.mark = true;
        push(&mut items, Some(m), dev);
        let (w, h) = place(&mut items);
        let svg = write(&items, w, h, "t");
        assert!(svg.starts_with("<svg xmlns=\"http://www.w3.org/2000/svg\""));
        assert!(svg.contains("<text x=\"16\" y=\"26\" fill=\"#000000\">M &lt;x&gt;</text>"));
        assert!(svg.contains(
            "data-kind=\"device\" data-name=\"e&amp;0\" data-id=\"1\" data-parent=\"0\" \
             data-min=\"16\" data-max=\"33\" data-mark=\"origin\"/>"
        ));
        assert!(svg.ends_with("</svg>\n"));
    }
}
