-- Pandoc filter that lays report.md out for paper (analysis/make_report.py runs it with lualatex).
--
-- report.md is written to be read on a screen: pipe tables of up to ~20 columns, some with cells
-- of a whole sentence, long inline-code tokens and images at their pixel size. Left to pandoc,
-- every column of a wide pipe table gets the same width (its separator row is `|---|---|`), so
-- numbers overlap their neighbours and short columns waste what the verdict column needs.
-- Here each table gets the largest font size at which its longest unbreakable words fit, column
-- widths from its content, and a landscape page only when nothing else fits.

-- A4 with 18 mm margins. Landscape pages (pdflscape) swap the text width for the text height.
local PT_PER_MM = 72.27 / 25.4
local MARGIN_MM = 18
local PORTRAIT_PT = (210 - 2 * MARGIN_MM) * PT_PER_MM
local LANDSCAPE_PT = (297 - 2 * MARGIN_MM) * PT_PER_MM
-- Estimates below err on the wide side; this keeps a little of the line free as well.
local SAFETY = 0.96
local TABCOLSEP_PT = 3

-- Font sizes tried in turn (size and leading in pt). Below 6 pt print is no longer readable.
local SIZES = {{8, 9.5}, {7, 8.5}, {6, 7.2}}

-- Advance widths in em of DejaVu Sans Condensed (the tables' font) and DejaVu Sans Mono (code),
-- averaged per character class (read from the TTFs' hmtx tables).
local function char_em(c, mono)
  if mono then return 0.602 end
  if c:match("%d") then return 0.572 end
  if c:match("%l") then return 0.507 end
  if c:match("%u") then return 0.605 end
  if c == " " then return 0.286 end
  if c:match("%p") then return 0.35 end
  return 0.6
end

local function text_em(s, mono)
  local em = 0
  -- One UTF-8 code point at a time: a multi-byte character is one glyph.
  for ch in s:gmatch("[%z\1-\127\194-\244][\128-\191]*") do em = em + char_em(ch, mono) end
  return em
end

-- Long code-like tokens may break after these characters, and, where a piece is still longer
-- than LONG characters (hashes, long identifiers), every CHUNK characters.
local BREAK_AFTER = "[/_.,:;=-]"
local CHUNK = 12
local LONG = 16

local function break_pieces(s)
  local pieces, start = {}, 1
  for i = 1, #s do
    if s:sub(i, i):match(BREAK_AFTER) and i < #s then
      pieces[#pieces + 1] = s:sub(start, i)
      start = i + 1
    end
  end
  pieces[#pieces + 1] = s:sub(start)
  local out = {}
  for _, p in ipairs(pieces) do
    -- Pieces with non-ASCII characters stay whole: byte chunks could split a UTF-8 sequence.
    if #p > LONG and not p:find("[\128-\255]") then
      for i = 1, #p, CHUNK do out[#out + 1] = p:sub(i, i + CHUNK - 1) end
    else
      out[#out + 1] = p
    end
  end
  return out
end

local ALLOW_BREAK = pandoc.RawInline("latex", "\\allowbreak{}")

local function breakable(s, make)
  local pieces = break_pieces(s)
  if #pieces == 1 then return nil end
  local out = {}
  for i, p in ipairs(pieces) do
    if i > 1 then out[#out + 1] = ALLOW_BREAK end
    out[#out + 1] = make(p)
  end
  return out
end

-- Widths in em of the pieces of a cell between break opportunities (spaces and the breaks the
-- Code/Str pass below inserted, which runs first): the widest piece is what its column needs at
-- least, their sum what it needs to stay on one line.
local function measure_inlines(inlines, acc)
  for _, el in ipairs(inlines) do
    local t = el.t
    if t == "Str" then
      acc.cur = acc.cur + text_em(el.text, false)
    elseif t == "Code" then
      local first = true
      for w in el.text:gmatch("%S+") do
        if not first then acc.close(); acc.total = acc.total + 0.602 end
        acc.cur = acc.cur + text_em(w, true)
        first = false
      end
    elseif t == "RawInline" then
      acc.close()
    elseif t == "Space" or t == "SoftBreak" or t == "LineBreak" then
      acc.close()
      acc.total = acc.total + 0.286
    elseif el.content and type(el.content) == "table" then
      measure_inlines(el.content, acc)
    end
  end
end

local function measure_cell(cell)
  local acc = {cur = 0, total = 0, widest = 0}
  acc.close = function()
    acc.widest = math.max(acc.widest, acc.cur)
    acc.total = acc.total + acc.cur
    acc.cur = 0
  end
  local first = true
  for _, block in ipairs(cell.contents) do
    if block.content and type(block.content) == "table" then
      if not first then acc.close() end
      measure_inlines(block.content, acc)
      first = false
    end
  end
  acc.close()
  return acc.widest, acc.total
end

local function table_rows(tbl)
  local rows = {}
  for _, r in ipairs(tbl.head.rows) do rows[#rows + 1] = r end
  for _, body in ipairs(tbl.bodies) do
    for _, r in ipairs(body.head) do rows[#rows + 1] = r end
    for _, r in ipairs(body.body) do rows[#rows + 1] = r end
  end
  for _, r in ipairs(tbl.foot.rows) do rows[#rows + 1] = r end
  return rows
end

-- Column widths at font `size` as fractions of what pandoc's p{} columns share of a line of
-- `line_pt`; nil when even the longest words do not fit, "natural" when every column fits
-- unbroken (pandoc's `l` columns then suffice).
local function layout(need, want, size, line_pt)
  local n = #need
  local avail = line_pt * SAFETY - 2 * (n - 1) * TABCOLSEP_PT
  local sum_need, sum_want = 0, 0
  for i = 1, n do
    sum_need = sum_need + need[i] * size
    sum_want = sum_want + want[i] * size
  end
  if sum_want <= avail then return "natural" end
  if sum_need > avail then return nil end
  -- Each column gets its widest word, and the rest of the line in proportion to what it lacks of
  -- its single-line width: short numeric columns stay whole, prose columns take the remainder.
  local spare, lack = avail - sum_need, sum_want - sum_need
  local fractions = {}
  local content = line_pt - 2 * (n - 1) * TABCOLSEP_PT
  for i = 1, n do
    local w = need[i] * size + (want[i] - need[i]) * size * spare / lack
    fractions[i] = w / content
  end
  return fractions
end

local function size_command(size)
  return string.format("\\fontsize{%g}{%g}\\selectfont", size[1], size[2])
end

function Table(tbl)
  local n = #tbl.colspecs
  local need, want = {}, {}
  for i = 1, n do need[i], want[i] = 0, 0 end
  for _, row in ipairs(table_rows(tbl)) do
    local col = 1
    for _, cell in ipairs(row.cells) do
      local widest, total = measure_cell(cell)
      local span = cell.col_span or 1
      if span == 1 and col <= n then
        -- A small allowance per cell for the glyphs the class averages underestimate.
        need[col] = math.max(need[col], widest + 0.5)
        want[col] = math.max(want[col], total + 0.5)
      end
      col = col + span
    end
  end
  local chosen, landscape
  for _, orientation in ipairs({{PORTRAIT_PT, false}, {LANDSCAPE_PT, true}}) do
    for _, size in ipairs(SIZES) do
      local result = layout(need, want, size[1], orientation[1])
      if result then
        chosen, landscape = {size = size, widths = result}, orientation[2]
        break
      end
    end
    if chosen then break end
  end
  if not chosen then
    -- Wider than a landscape page even at the smallest size: proportional widths, and cells
    -- whose words overflow. The build goes on; the log names the overfull boxes.
    local total = 0
    for i = 1, n do total = total + need[i] end
    local widths = {}
    for i = 1, n do widths[i] = need[i] / total end
    chosen, landscape = {size = SIZES[#SIZES], widths = widths}, true
    io.stderr:write(string.format("report_pdf.lua: a table of %d columns is wider than a landscape page\n", n))
  end
  for i = 1, n do
    local width = chosen.widths ~= "natural" and chosen.widths[i] or nil
    tbl.colspecs[i] = {tbl.colspecs[i][1], width}
  end
  local open = "\\begingroup\\tablefont" .. size_command(chosen.size) ..
               string.format("\\setlength{\\tabcolsep}{%gpt}", TABCOLSEP_PT)
  local close = "\\endgroup"
  if landscape then
    open = "\\begin{landscape}" .. open
    close = close .. "\\end{landscape}"
  end
  if os.getenv("EB_REPORT_PDF_DEBUG") then
    local needs = {}
    for i = 1, n do needs[i] = string.format("%.1f/%.1f", need[i], want[i]) end
    local head = tbl.head.rows[1] and pandoc.utils.stringify(tbl.head.rows[1].cells[n].contents) or ""
    io.stderr:write(string.format("table %d cols (.. %s): %gpt%s %s; em needed/wanted: %s\n", n, head, chosen.size[1],
                                  landscape and " landscape" or "",
                                  chosen.widths == "natural" and "natural" or "wrapped", table.concat(needs, " ")))
  end
  return {pandoc.RawBlock("latex", open), tbl, pandoc.RawBlock("latex", close)}
end

function Code(el)
  if #el.text <= LONG then return nil end
  return breakable(el.text, function(p) return pandoc.Code(p, el.attr) end)
end

-- Words of prose and numbers keep TeX's rules; paths, identifiers and time stamps may break.
function Str(el)
  if #el.text <= LONG or not el.text:find("[/_:-]") or el.text:match("^[%d.eE+-]+$") then return nil end
  return breakable(el.text, pandoc.Str)
end

local function is_figure(block)
  return block.t == "Para" and #block.content == 1 and block.content[1].t == "Image"
end

-- An image alone in a paragraph is a figure with its alt text as caption (what implicit_figures
-- does for pandoc's own Markdown; the gfm reader of pandoc 2.17 does not), drawn at the text
-- width unless that makes it taller than ~60% of the page.
function Para(para)
  if is_figure(para) then
    local img = para.content[1]
    img.title = "fig:" .. (img.title or "")
    img.attributes.width = "100%"
    img.attributes.height = "60%"
    return para
  end
end

-- longtable and figures offer a page break right before themselves, which can leave a heading
-- alone at the foot of a page: ask for room for the heading and the start of what follows it.
function Pandoc(doc)
  local blocks = {}
  for i, block in ipairs(doc.blocks) do
    local next_block = doc.blocks[i + 1]
    if block.t == "Header" and next_block and (next_block.t == "Table" or is_figure(next_block)) then
      blocks[#blocks + 1] = pandoc.RawBlock("latex", "\\keepwithnext{10\\baselineskip}")
    end
    blocks[#blocks + 1] = block
  end
  doc.blocks = blocks
  return doc
end

-- Fonts with the glyphs the report uses (×, ≤, ≈, µ, –: Latin Modern's text fonts lack some),
-- figures where the text puts them, and the table font switch used above.
local HEADER = [[
\usepackage{float}
\floatplacement{figure}{H}
\usepackage{pdflscape}
\newfontfamily\tablefont{DejaVu Sans Condensed}
\pdfvariable suppressoptionalinfo \numexpr 32 + 64 + 128 + 512\relax
\raggedbottom
\makeatletter
\newcommand\keepwithnext[1]{\par\begingroup
  \dimen@=\pagegoal \advance\dimen@ by -\pagetotal
  \ifdim\dimen@<#1\relax \ifdim\dimen@>\z@ \vfil\penalty-\@M \fi\fi
  \endgroup}
\makeatother
]]

-- report.md has no metadata block of its own: everything the template needs is set here.
function Meta(meta)
  meta["header-includes"] = pandoc.MetaBlocks({pandoc.RawBlock("latex", HEADER)})
  meta.papersize = "a4"
  meta.geometry = string.format("margin=%dmm", MARGIN_MM)
  meta.mainfont = "DejaVu Serif"
  meta.sansfont = "DejaVu Sans"
  meta.monofont = "DejaVu Sans Mono"
  meta.fontsize = "10pt"
  meta.colorlinks = true
  return meta
end

-- Break opportunities first: the table layout measures the pieces between them.
return {
  {Pandoc = Pandoc},
  {Code = Code, Str = Str, Para = Para},
  {Table = Table},
  {Meta = Meta},
}
