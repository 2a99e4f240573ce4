"""The tests of ``test_widgets_real_lab.py`` on the embedded samples (``ctxsdk.samples``):
they always run. A module of its own, so that it has its own JupyterLab; the tests are
bound in the order they run there (one kernel serves them in turn)."""

from __future__ import annotations

from . import test_widgets_real_lab as _real

KIND = "sample"

nb = _real.nb
test_observations_toggle_fits_every_node_in_view = (
    _real.test_observations_toggle_fits_every_node_in_view
)
test_a_search_lists_hits_with_a_snippet = _real.test_a_search_lists_hits_with_a_snippet
test_the_panels_show_no_internal_lines = _real.test_the_panels_show_no_internal_lines
test_screenshots_light_and_dark = _real.test_screenshots_light_and_dark
