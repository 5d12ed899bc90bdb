"""URL routing."""

from django.contrib import admin
from django.contrib.auth import views as auth_views
from django.urls import include, path

from pacelab import views

urlpatterns = [
    path("", views.home, name="home"),
    path("healthz", views.healthz, name="healthz"),
    path("favicon.ico", views.favicon, name="favicon"),
    path("accounts/login/", auth_views.LoginView.as_view(), name="login"),
    path("accounts/logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("i18n/", include("django.conf.urls.i18n")),
    path("streams/", include("playback.urls.streams")),
    path("playground/", include("playback.urls.playground")),
    path("dashboard/", include("dashboard.urls")),
    path("admin/", admin.site.urls),
    path("", include("studyapp.urls")),
]
