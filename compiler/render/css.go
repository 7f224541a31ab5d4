package render

// css styles the page; it is inlined so the page needs no other file.
const css = `:root{--bg:#111217;--panel:#181b1f;--text:#d8d9da;--muted:#8e8e8e;--line:#2c3235;--page:#d44a3a;--ticket:#ff9830;--marker:#b877d9}
*{box-sizing:border-box}
body{margin:0;background:var(--bg);color:var(--text);font:14px/1.4 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif}
header{padding:16px 24px;border-bottom:1px solid var(--line)}
h1{margin:0 0 4px;font-size:22px}
h2{font-size:18px;margin:24px 0 8px}
h3{font-size:15px;margin:12px 0 6px}
main{padding:0 24px 48px}
nav ul{list-style:none;padding:0;margin:8px 0 0;display:flex;flex-wrap:wrap;gap:12px}
a{color:#6e9fff}
.scenario,.span,.file,.note{color:var(--muted);margin:2px 0}
.slo{background:var(--panel);border:1px solid var(--line);border-radius:4px;padding:6px 16px;margin:6px 0;color:var(--text);font-size:14px}
.slo>summary{cursor:pointer}.slo>summary h3{display:inline;margin:0}.slo .brief{color:var(--muted)}
dl{display:grid;grid-template-columns:max-content 1fr;gap:2px 16px;margin:8px 0}
dt{color:var(--muted)}dd{margin:0}
table{border-collapse:collapse;margin:8px 0;font-size:13px}
th,td{border:1px solid var(--line);padding:3px 8px;text-align:left;vertical-align:top}
tr.page td:first-child{color:var(--page)}tr.ticket td:first-child{color:var(--ticket)}
.grid{display:grid;grid-template-columns:repeat(24,minmax(0,1fr));grid-auto-rows:30px;gap:4px}
.row{margin:0;align-self:end;border-bottom:1px solid var(--line);font-size:14px}
.panel{position:relative;margin:0;background:var(--panel);border:1px solid var(--line);border-radius:4px;padding:4px 8px;display:flex;flex-direction:column;overflow:hidden;min-width:0}
figcaption{display:flex;gap:8px;align-items:baseline;font-weight:600;min-height:22px}
figcaption .title{white-space:nowrap;overflow:hidden;text-overflow:ellipsis}
figcaption details{font-weight:400;color:var(--muted);font-size:12px}
figcaption details summary{cursor:pointer;list-style:none;border:1px solid var(--muted);border-radius:50%;width:16px;height:16px;text-align:center;line-height:14px}
figcaption details[open] p{position:absolute;z-index:2;top:26px;left:4px;right:4px;max-height:calc(100% - 30px);overflow:auto;margin:0;background:var(--panel);border:1px solid var(--line);padding:6px;color:var(--text)}
.panel svg{flex:1 1 auto;min-height:0;width:100%}
.text{overflow:auto;font-size:12px}
.text table{font-size:12px}
path.grid{stroke:var(--line);stroke-width:1;fill:none}
path.axis{stroke:var(--muted);stroke-width:1;fill:none}
path.series,path.spark{fill:none;stroke-width:1.6}
path.threshold{stroke-width:1.4;fill:none}
path.threshold.dashed{stroke-dasharray:6 4}
rect.band-page{fill:var(--page);fill-opacity:.18}
rect.band-ticket{fill:var(--ticket);fill-opacity:.14}
rect.band-marker{fill:var(--marker);fill-opacity:.9}
text{fill:var(--muted);font-size:11px}
text.ylabel{text-anchor:end}
text.xlabel{text-anchor:middle}
text.thlabel{text-anchor:start;font-size:10px}
text.nodata{text-anchor:middle;font-size:13px}
text.statname{text-anchor:middle;font-size:12px}
text.statvalue{text-anchor:middle;font-weight:600}
text.statname.list{text-anchor:start}text.statvalue.list{text-anchor:end}
.legend{list-style:none;margin:2px 0 0;padding:0;display:flex;flex-wrap:wrap;gap:2px 12px;font-size:11px;color:var(--muted);max-height:34px;overflow:auto;flex:none}
.legend.many{max-height:45%;gap:0 10px;line-height:1.25}
.swatch{display:inline-block;width:12px;height:4px;margin-right:4px;vertical-align:middle}
.swatch.line{height:0;border-top:2px solid}.swatch.line.dashed{border-top-style:dashed}
.swatch.band-page{height:10px;background:var(--page);opacity:.5}.swatch.band-ticket{height:10px;background:var(--ticket);opacity:.5}.swatch.band-marker{height:10px;width:3px;background:var(--marker)}
code{font-size:12px}
`
