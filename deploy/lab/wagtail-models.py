# --- appended to home/models.py by deploy/lab/wagtail.sh: the lab's content page type ---
from django.db import models  # noqa: E402
from wagtail.admin.panels import FieldPanel  # noqa: E402
from wagtail.fields import RichTextField  # noqa: E402
from wagtail.models import Page  # noqa: E402


class LabPage(Page):
    """A title, an intro line and a rich-text body (a Draftail editor in the admin)."""

    intro = models.CharField(max_length=250, blank=True)
    body = RichTextField(blank=True)

    content_panels = Page.content_panels + [FieldPanel("intro"), FieldPanel("body")]
