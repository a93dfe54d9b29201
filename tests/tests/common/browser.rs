//! A page checked in a real browser (Debian's headless chromium): the DOM it builds
//! (--dump-dom) and what it draws (--screenshot, decoded: every plot's area holds coloured data).

use std::path::Path;
use std::process::Command;

/// Each `<svg>…</svg>` of `html`.
pub fn svgs(html: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut rest = html;
    while let Some(s) = rest.find("<svg") {
        let e = rest[s..].find("</svg>").map_or(rest.len(), |e| s + e + 6);
        out.push(&rest[s..e]);
        rest = &rest[e..];
    }
    out
}

/// A plot with data: plotted lines, or filled bars and cells beyond the white ground.
pub fn has_data(svg: &str) -> bool {
    svg.contains("<polyline") || svg.matches("<rect").count() > 2
}

/// Debian's headless chromium, when installed.
pub fn chromium() -> Option<&'static str> {
    ["chromium", "chromium-browser"].into_iter().find(|c| {
        Command::new(c)
            .arg("--version")
            .output()
            .is_ok_and(|o| o.status.success())
    })
}

/// Chromium with the flags of a headless check, bounded to two minutes (coreutils' timeout).
pub fn browser(chromium: &str, profile: &Path) -> Command {
    let mut c = Command::new("timeout");
    c.args(["120", chromium]);
    c.args([
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--hide-scrollbars",
        "--force-device-scale-factor=1",
        "--no-first-run",
        "--disable-extensions",
        "--disable-background-networking",
        "--disable-dev-shm-usage",
    ])
    .arg(format!("--user-data-dir={}", profile.display()));
    c
}

/// Where the browser put each plot (CSS pixels, from the page's top) and how tall the page is,
/// measured by a script added to a copy of the page; the copy is what is drawn.
pub struct Layout {
    plots: Vec<[f64; 4]>,
    height: u32,
}

const MEASURE: &str = "<script>(function(){var r=[];\
document.querySelectorAll('div.plot > svg').forEach(function(s){\
var b=s.getBoundingClientRect();if(b.width>0&&b.height>0)\
r.push([b.left+scrollX,b.top+scrollY,b.width,b.height].map(Math.round).join(','));});\
var p=document.createElement('pre');p.id='arum-layout';\
p.textContent=document.documentElement.scrollHeight+';'+r.join(';');\
document.body.appendChild(p);})();</script>";

const WIDTH: u32 = 1280;

pub fn dump_dom(chromium: &str, page: &Path, profile: &Path) -> String {
    // The width the screenshot is taken at, so the layout measured is the one drawn.
    let out = browser(chromium, profile)
        .arg(format!("--window-size={WIDTH},1000"))
        .arg("--dump-dom")
        .arg(format!("file://{}", page.display()))
        .output()
        .expect("chromium runs");
    assert!(
        out.status.success(),
        "chromium --dump-dom failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

pub fn layout(dom: &str) -> Layout {
    let start = dom
        .find("<pre id=\"arum-layout\">")
        .expect("the layout script ran")
        + 22;
    let text = &dom[start..start + dom[start..].find("</pre>").unwrap()];
    let mut parts = text.split(';');
    let height = parts.next().unwrap().parse().expect("page height");
    // A page without plots leaves one empty part after the height.
    let plots = parts
        .filter(|p| !p.is_empty())
        .map(|p| {
            let v: Vec<f64> = p.split(',').map(|x| x.parse().unwrap()).collect();
            [v[0], v[1], v[2], v[3]]
        })
        .collect();
    Layout { plots, height }
}

pub struct Image {
    width: usize,
    height: usize,
    rgba: Vec<u8>,
}

pub fn decode(path: &Path) -> Image {
    let file = std::fs::File::open(path).expect("screenshot written");
    let mut decoder = png::Decoder::new(std::io::BufReader::new(file));
    decoder.set_transformations(png::Transformations::EXPAND | png::Transformations::STRIP_16);
    let mut reader = decoder.read_info().expect("a PNG");
    let mut buf = vec![0; reader.output_buffer_size().expect("size")];
    let info = reader.next_frame(&mut buf).expect("a frame");
    let channels = info.color_type.samples();
    let rgba = buf[..info.buffer_size()]
        .chunks(channels)
        .flat_map(|p| match channels {
            3 => [p[0], p[1], p[2], 255],
            4 => [p[0], p[1], p[2], p[3]],
            _ => [p[0], p[0], p[0], 255],
        })
        .collect();
    Image {
        width: info.width as usize,
        height: info.height as usize,
        rgba,
    }
}

/// Pixels of the rectangle that carry colour (plotted data: lines, bars, cells), against the
/// black, grey and white of axes, text and ground.
pub fn coloured_pixels(img: &Image, r: [f64; 4]) -> usize {
    let (x0, y0) = (r[0] as usize, r[1] as usize);
    let (x1, y1) = (
        ((r[0] + r[2]) as usize).min(img.width),
        ((r[1] + r[3]) as usize).min(img.height),
    );
    let mut n = 0;
    for y in y0..y1 {
        for x in x0..x1 {
            let p = &img.rgba[(y * img.width + x) * 4..][..3];
            let hi = p.iter().max().unwrap();
            let lo = p.iter().min().unwrap();
            if hi - lo > 60 {
                n += 1;
            }
        }
    }
    n
}

/// In the browser: the same sections and plots in the DOM as in the file, and every plot on
/// the screen with data drawn in it. Returns the DOM and how many plots were on the screenshot.
pub fn check_in_browser(chromium: &str, html: &str, page: &Path, dir: &Path) -> (String, usize) {
    let profile = dir.join("chromium-profile");
    let dom = dump_dom(chromium, page, &profile);
    let ids: Vec<&str> = html
        .match_indices("<details class=\"section\" id=\"")
        .map(|(i, m)| {
            let s = i + m.len();
            &html[s..s + html[s..].find('"').unwrap()]
        })
        .collect();
    for id in &ids {
        assert!(
            dom.contains(&format!("id=\"{id}\"")),
            "section {id} is not in the browser's DOM"
        );
    }
    let in_file = svgs(html);
    let in_dom = svgs(&dom);
    assert_eq!(
        in_dom.len(),
        in_file.len(),
        "the browser built another number of SVG elements"
    );
    assert!(in_dom.iter().all(|s| has_data(s)), "an SVG lost its data");

    let measured = dir.join("measured.html");
    std::fs::write(
        &measured,
        html.replace("</body>", &format!("{MEASURE}</body>")),
    )
    .unwrap();
    let at = layout(&dump_dom(chromium, &measured, &profile));
    let open_plots = html.matches("<div class=\"plot\">").count()
        - html
            .split("<details class=\"item\">")
            .skip(1)
            .map(|s| {
                s[..s.find("</details>").unwrap()]
                    .matches("<div class=\"plot\">")
                    .count()
            })
            .sum::<usize>();
    assert_eq!(
        at.plots.len(),
        open_plots,
        "every plot of an open section is laid out with a size"
    );
    let height = at.height.min(16000);
    let shot = dir.join("page.png");
    let out = browser(chromium, &profile)
        .arg(format!("--screenshot={}", shot.display()))
        .arg(format!("--window-size={WIDTH},{height}"))
        .arg(format!("file://{}", measured.display()))
        .output()
        .expect("chromium runs");
    assert!(out.status.success(), "chromium --screenshot failed");
    let img = decode(&shot);
    assert_eq!(img.width, WIDTH as usize, "screenshot width");
    let mut drawn = 0;
    for r in at.plots.iter().filter(|r| r[1] + r[3] <= img.height as f64) {
        let n = coloured_pixels(&img, *r);
        eprintln!("plot at {r:?}: {n} coloured pixels");
        assert!(
            n >= 300,
            "the plot at {r:?} is blank on the screen ({n} coloured pixels)"
        );
        drawn += 1;
    }
    assert!(
        drawn > 0 || at.plots.is_empty(),
        "none of the {} plots was on the screenshot",
        at.plots.len()
    );
    // The check can fail: the page's top (title, lead, the first table) has no colour.
    assert!(
        coloured_pixels(&img, [0.0, 0.0, 1280.0, 40.0]) < 50,
        "colour where no plot is: the measure does not tell plots from the page"
    );
    eprintln!(
        "browser: {} sections, {} plots drawn, page {} px high",
        ids.len(),
        drawn,
        at.height
    );
    (dom, drawn)
}
