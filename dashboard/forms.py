"""Forms of the dashboard: a study file (uploaded or typed), a copy's new id, sharing."""

from __future__ import annotations

from django import forms
from django.utils.translation import gettext_lazy as _

from dashboard.access import EDITOR, VIEWER

MAX_STUDY_FILE_BYTES = 512 * 1024


class StudyFileForm(forms.Form):
    """Either a file or the text: a file, when given, wins (the textarea then shows what was uploaded)."""

    file = forms.FileField(label=_("Study file (YAML)"), required=False)
    text = forms.CharField(label=_("Or edit the study file here"), required=False,
                           widget=forms.Textarea(attrs={"rows": 30, "cols": 100, "spellcheck": "false",
                                                        "class": "yaml"}))

    def clean(self):
        data = super().clean()
        upload = data.get("file")
        if upload:
            if upload.size > MAX_STUDY_FILE_BYTES:
                raise forms.ValidationError(_("The study file is too large (at most 512 KB)."))
            try:
                data["text"] = upload.read().decode("utf-8")
            except UnicodeDecodeError:
                raise forms.ValidationError(_("The study file must be UTF-8 text.")) from None
        if not (data.get("text") or "").strip():
            raise forms.ValidationError(_("Upload a study file or type it in."))
        return data


class CopyForm(forms.Form):
    slug = forms.SlugField(label=_("Id of the copy"), max_length=63,
                           help_text=_("Lowercase letters, digits, '-' and '_'. Participants see it in their link."))


class ShareForm(forms.Form):
    username = forms.CharField(label=_("Username"), max_length=150)
    role = forms.ChoiceField(label=_("Role"), choices=[(EDITOR, _("Editor")), (VIEWER, _("Viewer"))])
