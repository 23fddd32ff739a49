"""Make the screenshots in docs/explorer.md: the explorer page of a real Llama trace, and of a comparison.

Both models are transformers' LlamaForCausalLM with random weights from a small config (no
download), traced by this project's debugger (so the rows show module classes): the first with
printed values; the comparison is between two traces written with ``use_repr=False``, the second
model carrying a porting bug (a few rows of layer 1's MLP up-projection scaled). Run from the
repository root (needs transformers, playwright and a system Chromium)::

    .venv/bin/python docs/explorer_screenshots.py            # writes docs/explorer/*.png
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from model_debugging import write_view  # noqa: E402
from tests.explorer.traces import write_llama_trace  # noqa: E402

VIEWPORT = {"width": 1400, "height": 760}


def _shrink(png: Path) -> None:
    """Keep the committed PNG small: a 128-colour palette is plenty for a screenshot of text."""
    from PIL import Image  # installed with matplotlib (the plot extra)

    with Image.open(png) as image:
        small = image.convert("RGB").quantize(colors=128)
    small.save(png, optimize=True)


def _shoot(browser, page_file: Path, target: Path, select: str | None = None) -> None:
    page = browser.new_page(viewport=VIEWPORT)
    page.goto(page_file.as_uri())
    page.wait_for_selector("body[data-ready]")
    if select is not None:
        page.click(f'.row[data-module="{select}"] .name')
    page.screenshot(path=str(target))
    page.close()
    _shrink(target)
    print(f"wrote {target}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--output_dir", type=Path, default=Path(__file__).parent / "explorer")
    args = parser.parse_args(argv)
    executable = shutil.which("chromium") or shutil.which("chromium-browser")
    if executable is None:
        print("no Chromium on PATH (Debian: apt-get install chromium)", file=sys.stderr)
        return 2
    from playwright.sync_api import sync_playwright

    args.output_dir.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as scratch, sync_playwright() as playwright:
        root = Path(scratch)
        single = write_view(write_llama_trace(root / "single", layers=2))
        reference = write_llama_trace(root / "reference", layers=4, use_repr=False)
        candidate = write_llama_trace(root / "candidate", layers=4, use_repr=False, broken_layer=1)
        compared = write_view(reference, root / "compare.html", compare=candidate)
        browser = playwright.chromium.launch(executable_path=executable, args=["--no-sandbox"])
        _shoot(
            browser,
            single,
            args.output_dir / "llama_trace.png",
            "LlamaForCausalLM.model.layers.0.self_attn.q_proj",
        )
        _shoot(browser, compared, args.output_dir / "llama_compare.png")
        browser.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
