"""Content negotiation for the endpoints whose ``?format=`` names a file format (ground truth, exports)."""

from __future__ import annotations

from rest_framework.negotiation import DefaultContentNegotiation


class IgnoreFormatParameter(DefaultContentNegotiation):
    """``?format=`` names the export format here, not a DRF renderer; always answer JSON or the export."""

    def select_renderer(self, request, renderers, format_suffix=None):
        return renderers[0], renderers[0].media_type
