"""Seed a lab Wagtail project (run by deploy/lab/wagtail.sh from the project's directory, with
its venv's Python): the superuser, the site's address, and a few pages under the home page.
Idempotent: what exists is left alone, so a restart keeps what an agent created. Prints the
admin paths that need a login (they hold page ids) as one comma-separated line."""

import os
import sys

sys.path.insert(0, os.getcwd())
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "labsite.settings.production")

import django  # noqa: E402

django.setup()

from urllib.parse import urlsplit  # noqa: E402

from django.contrib.auth import get_user_model  # noqa: E402
from home.models import HomePage, LabPage  # noqa: E402
from wagtail.models import Site  # noqa: E402

PAGES = [  # (parent slug or None for the home page, slug, title, intro, body, published)
    (
        None,
        "about-us",
        "About us",
        "Who writes the Lab Gazette, and why.",
        "<p>The Lab Gazette is a small newsroom covering the city: transport, libraries, "
        "parks and the council.</p><p>Write to the editors at editors@lab.test.</p>",
        True,
    ),
    (
        None,
        "news",
        "News",
        "The latest stories from around town.",
        "<p>Stories are published as soon as they are checked.</p>",
        True,
    ),
    (
        "news",
        "bike-lanes",
        "City council approves new bike lanes",
        "Twelve kilometres of protected lanes by next summer.",
        "<p>The council voted 9 to 2 on Tuesday to build protected bike lanes on the ring road."
        "</p><p>Work starts in March; the first section opens in June.</p>",
        True,
    ),
    (
        "news",
        "library-reopens",
        "Library reopens after renovation",
        "The central library opens its doors again on Saturday.",
        "<p>After eighteen months of work the central library has a new reading room, a "
        "makerspace and longer opening hours.</p>",
        True,
    ),
    (
        None,
        "contact",
        "Contact",
        "How to reach the newsroom.",
        "<p>Call 555-0100 on weekdays, or use the form at the front desk.</p>",
        True,
    ),
    (
        "news",
        "upcoming-events",
        "Upcoming events",
        "A draft, not yet published.",
        "<p>To be written.</p>",
        False,
    ),
]

User = get_user_model()
if not User.objects.filter(username="admin").exists():
    User.objects.create_superuser(
        "admin", "admin@lab.test", "admin-pass", first_name="Ada", last_name="Admin"
    )

home = HomePage.objects.get(depth=2)
url = urlsplit(os.environ.get("WAGTAIL_LAB_URL", "http://127.0.0.1:80"))
site = Site.objects.get(is_default_site=True)
site.hostname, site.port, site.site_name = url.hostname, url.port or 80, "Lab Gazette"
site.save()

for parent_slug, slug, title, intro, body, published in PAGES:
    parent = home if parent_slug is None else LabPage.objects.get(slug=parent_slug)
    if LabPage.objects.filter(slug=slug).exists():
        continue
    page = parent.add_child(
        instance=LabPage(title=title, slug=slug, intro=intro, body=body, live=False)
    )
    revision = page.save_revision()
    if published:
        revision.publish()

about, news = LabPage.objects.get(slug="about-us"), LabPage.objects.get(slug="news")
sys.stdout.write(
    f"/admin/,/admin/pages/{home.id}/,/admin/pages/{news.id}/,/admin/pages/{about.id}/edit/\n"
)
