"""``{{ text|journey_markdown }}``: a study text as markdown paragraphs (see studyapp/journey/texts.py)."""

from django import template
from django.utils.safestring import SafeString, mark_safe

from studyapp.journey import texts as journey_text

register = template.Library()


@register.filter
def journey_markdown(value) -> SafeString:
    return mark_safe(journey_text.to_html(value))  # noqa: S308 - markdown-it escapes raw HTML (html=False)
