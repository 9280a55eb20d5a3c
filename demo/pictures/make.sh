#!/bin/sh
# The demo world's pictures, drawn by ImageMagick from their MVG (its vector drawing language) with the CJK font
# scripts/setup.sh installs (fonts-wqy-microhei). Run from this folder; the PNGs are committed, so loading the demo
# needs neither tool.
set -eu
font=$(fc-match -f '%{file}' 'WenQuanYi Micro Hei')
convert -size 900x420 -font "$font" mvg:llm-proxy-dependencies.mvg -depth 8 -strip llm-proxy-dependencies.png
