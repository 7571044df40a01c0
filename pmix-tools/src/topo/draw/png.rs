//! The PNG: the SVG [`write`](super::svg::write) made, rendered by resvg (usvg parses
//! it, tiny-skia rasterizes and encodes it), one pixel per SVG unit, never drawn by
//! hand.
//!
//! Text needs a font: resvg's font database loads the system's fonts (its own scan of
//! the usual font folders and fontconfig's configuration; pmix-topo reads none itself)
//! and the picture's monospace family is the first of [`MONOSPACE`] present, else any
//! monospace face, else any face. No font is bundled (the small, freely licensed
//! monospace fonts still weigh 100–300 KB, in every pmix-topo binary, for a machine
//! without fonts); on such a machine the PNG has every box and colour but no text, and
//! the run says so on standard error.

use resvg::{tiny_skia, usvg};

/// The monospace families tried first, in order.
const MONOSPACE: [&str; 5] = [
    "DejaVu Sans Mono",
    "Liberation Mono",
    "Noto Sans Mono",
    "Menlo",
    "Consolas",
];

/// What standard error says when no font was found.
pub(super) const NO_FONT: &str =
    "pmix-topo: no font found on this system: the PNG has its boxes and colours but no text\n";

/// The PNG of `svg` with the system's fonts, and a note for standard error (empty, or
/// [`NO_FONT`]).
///
/// # Errors
/// A message when the SVG cannot be parsed or the picture is too large to allocate.
pub(super) fn render(svg: &str) -> Result<(Vec<u8>, &'static str), String> {
    let mut opt = usvg::Options::default();
    let db = opt.fontdb_mut();
    db.load_system_fonts();
    let note = match monospace_family(db) {
        Some(family) => {
            db.set_monospace_family(family);
            ""
        }
        None => NO_FONT,
    };
    Ok((render_with(svg, &opt)?, note))
}

/// The family to draw monospace text in, `None` without any font.
fn monospace_family(db: &usvg::fontdb::Database) -> Option<String> {
    let has = |name: &str| {
        db.faces()
            .any(|f| f.families.iter().any(|(n, _)| n.eq_ignore_ascii_case(name)))
    };
    if let Some(name) = MONOSPACE.iter().find(|n| has(n)) {
        return Some((*name).to_owned());
    }
    let first = |mono: bool| {
        db.faces()
            .filter(|f| f.monospaced || !mono)
            .find_map(|f| f.families.first().map(|(n, _)| n.clone()))
    };
    first(true).or_else(|| first(false))
}

/// The PNG of `svg` rendered with `opt` (its fonts).
fn render_with(svg: &str, opt: &usvg::Options<'_>) -> Result<Vec<u8>, String> {
    let tree = usvg::Tree::from_str(svg, opt).map_err(|e| format!("the SVG: {e}"))?;
    let size = tree.size().to_int_size();
    let mut pixmap = tiny_skia::Pixmap::new(size.width(), size.height()).ok_or_else(|| {
        format!(
            "a {}x{} picture is too large to render",
            size.width(),
            size.height()
        )
    })?;
    pixmap.fill(tiny_skia::Color::WHITE);
    resvg::render(
        &tree,
        tiny_skia::Transform::identity(),
        &mut pixmap.as_mut(),
    );
    pixmap
        .encode_png()
        .map_err(|e| format!("PNG encoding: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    const SVG: &str = "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"40\" height=\"30\">\
        <rect x=\"5\" y=\"5\" width=\"20\" height=\"10\" fill=\"#d73027\"/>\
        <text x=\"5\" y=\"25\" font-family=\"monospace\">x</text></svg>";

    #[test]
    fn without_fonts_the_boxes_still_render() {
        // An empty font database: the text is dropped, the rectangle drawn.
        let png = render_with(SVG, &usvg::Options::default()).unwrap();
        let back = tiny_skia::Pixmap::decode_png(&png).unwrap();
        assert_eq!((back.width(), back.height()), (40, 30));
        let px = back.pixel(10, 10).unwrap();
        assert_eq!((px.red(), px.green(), px.blue()), (0xd7, 0x30, 0x27));
        let corner = back.pixel(0, 0).unwrap();
        assert_eq!(
            (corner.red(), corner.green(), corner.blue()),
            (255, 255, 255)
        );
    }

    #[test]
    fn a_bad_svg_is_an_error_not_a_panic() {
        assert!(render_with("<svg", &usvg::Options::default()).is_err());
    }
}
