"""Real documents of the formats that are not text, made here: HTML pages and PDFs."""

from __future__ import annotations

import io

PAGE = """<!doctype html>
<html><head><title>  The   Garden page </title>
<style>h1 { color: green }</style><script>document.write("tracking quokka")</script></head>
<body>
<nav><a href="javascript:alert(1)">Home</a></nav>
<h1>Garden</h1>
<p>Compost <b>heaps</b> and a <a href="https://example.org/worms">worm farm</a>.
<img src="data:image/png;base64,iVBORw0KGgoAAAANSUhEUg==" alt="a worm"></p>
<h2>Watering</h2>
<p>Water tomatoes deeply; snake_case stays.</p>
<pre><code># not a heading
</code></pre>
<h3>Rain</h3>
<ul><li>barrels</li><li>butts</li></ul>
<noscript>enable scripts</noscript>
</body></html>
"""


def _pdf_bytes(objects: list[str]) -> bytes:
    """`objects` (numbered from 1, the first the catalog) as a PDF, rewritten by pypdf so its
    cross-reference table is exact."""
    from pypdf import PdfReader, PdfWriter

    raw = io.BytesIO()
    raw.write(b"%PDF-1.4\n")
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(raw.tell())
        raw.write(f"{number} 0 obj\n{body}\nendobj\n".encode("latin-1"))
    xref = raw.tell()
    raw.write(f"xref\n0 {len(objects) + 1}\n0000000000 65535 f \n".encode())
    for offset in offsets:
        raw.write(f"{offset:010d} 00000 n \n".encode())
    raw.write(
        f"trailer\n<< /Size {len(objects) + 1} /Root 1 0 R >>\nstartxref\n{xref}\n%%EOF\n".encode()
    )
    out = io.BytesIO()
    PdfWriter(clone_from=PdfReader(io.BytesIO(raw.getvalue()))).write(out)
    return out.getvalue()


def make_pdf(pages: list[str], *, title: str | None = None) -> bytes:
    """A PDF with one page of Helvetica text per item of `pages` (lines split on newlines),
    written by pypdf so its cross-reference table is exact."""
    from pypdf import PdfReader, PdfWriter

    count = len(pages)
    kids = " ".join(f"{4 + 2 * i} 0 R" for i in range(count))
    objects = [
        "<< /Type /Catalog /Pages 2 0 R >>",
        f"<< /Type /Pages /Kids [{kids}] /Count {count} >>",
        "<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
    ]
    for i, text in enumerate(pages):
        lines = " ".join(
            "(" + line.replace("(", "[").replace(")", "]") + ") Tj T*" for line in text.split("\n")
        )
        stream = f"BT /F1 12 Tf 72 720 Td 14 TL {lines} ET"
        objects.append(
            "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] "
            f"/Resources << /Font << /F1 3 0 R >> >> /Contents {5 + 2 * i} 0 R >>"
        )
        objects.append(f"<< /Length {len(stream)} >>\nstream\n{stream}\nendstream")
    data = _pdf_bytes(objects)
    if title is None:
        return data
    writer = PdfWriter(clone_from=PdfReader(io.BytesIO(data)))
    writer.add_metadata({"/Title": title})
    out = io.BytesIO()
    writer.write(out)
    return out.getvalue()


def encrypt_pdf(data: bytes, user_password: str) -> bytes:
    from pypdf import PdfReader, PdfWriter

    writer = PdfWriter(clone_from=PdfReader(io.BytesIO(data)))
    writer.encrypt(user_password, "owner-secret", algorithm="RC4-128")
    out = io.BytesIO()
    writer.write(out)
    return out.getvalue()


def make_nested_pdf(depth: int, fanout: int, *, pages: int = 1, text: str = "laugh") -> bytes:
    """A PDF of a few KB whose every page draws `fanout ** depth` copies of `text`: each form
    XObject draws the one below it `fanout` times (the PDF form of a "billion laughs")."""
    first_form = 4
    content = first_form + depth + 1
    first_page = content + 1
    kids = " ".join(f"{first_page + i} 0 R" for i in range(pages))
    objects = [
        "<< /Type /Catalog /Pages 2 0 R >>",
        f"<< /Type /Pages /Kids [{kids}] /Count {pages} >>",
        "<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
    ]
    xobjects = " ".join(f"/X{level} {first_form + level} 0 R" for level in range(depth + 1))
    resources = f"<< /Font << /F1 3 0 R >> /XObject << {xobjects} >> >>"
    for level in range(depth + 1):
        body = f"BT /F1 12 Tf ({text}) Tj ET" if level == 0 else f"/X{level - 1} Do " * fanout
        objects.append(
            f"<< /Type /XObject /Subtype /Form /BBox [0 0 612 792] /Resources {resources} "
            f"/Length {len(body)} >>\nstream\n{body}\nendstream"
        )
    top = f"/X{depth} Do"
    objects.append(f"<< /Length {len(top)} >>\nstream\n{top}\nendstream")
    objects += [
        "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] "
        f"/Resources {resources} /Contents {content} 0 R >>"
    ] * pages
    return _pdf_bytes(objects)


def nested_html(size: int, depth: int = 190) -> bytes:
    """About `size` bytes of HTML: `depth` nested `<div>`s (inside the depth that is converted)
    around a run of `<span>`s, each of which the converter looks up through every ancestor."""
    head, tail, unit = "<div>" * depth, "</div>" * depth, "<span>x</span> "
    return (head + unit * ((size - len(head) - len(tail)) // len(unit)) + tail).encode()


def long_ordered_list(items: int) -> bytes:
    """An `<ol>` of `items` items: markdownify numbers each by counting its earlier siblings."""
    return ("<ol>" + "<li>x</li>" * items + "</ol>").encode()
