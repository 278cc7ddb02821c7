"""The export page's form."""

from __future__ import annotations

from django import forms


class ExportForm(forms.Form):
    format = forms.CharField(required=False, max_length=32)
    recipe = forms.CharField(required=False, max_length=64)
    profile = forms.CharField(required=False, max_length=64)
    # `validate_label_name` judges it, as the API's `label`.
    label = forms.CharField(required=False)
