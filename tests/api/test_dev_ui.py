"""``dev_ui_dir`` (AGENTQ_DEV_UI_DIR): a built web UI served at /dev-ui/ on the API's origin."""

from __future__ import annotations

import pytest

from api import ApiSettings, create_app
from runtime.errors import UsageError

from .conftest import make_client


@pytest.fixture
def ui_dir(tmp_path):
    (tmp_path / "index.html").write_text("<html>the dev UI</html>")
    (tmp_path / "main.js").write_text("console.log('ui')")
    return tmp_path


async def test_the_ui_files_are_served_under_dev_ui_beside_the_api(memory_services, ui_dir):
    app = create_app(ApiSettings(app_names=["weather"], dev_ui_dir=str(ui_dir)), memory_services)
    async with make_client(app) as http:
        index, script = await http.get("/dev-ui/"), await http.get("/dev-ui/main.js")
        bare = await http.get("/dev-ui", follow_redirects=False)
        apps = await http.get("/list-apps")
    assert (index.status_code, index.text) == (200, "<html>the dev UI</html>")
    assert (script.status_code, script.headers["content-type"].split(";")[0]) == (200, "text/javascript")
    assert (bare.status_code, bare.headers["location"]) == (307, "/dev-ui/")
    assert apps.json() == ["weather"]


async def test_the_ui_is_told_the_api_is_on_its_own_origin_and_that_there_is_no_telemetry(memory_services, ui_dir):
    app = create_app(ApiSettings(dev_ui_dir=str(ui_dir)), memory_services)
    async with make_client(app) as http:
        config = await http.get("/dev-ui/assets/config/runtime-config.json")
    assert config.json() == {"backendUrl": "", "telemetry": False}


async def test_without_the_setting_there_is_no_ui(open_app):
    async with make_client(open_app) as http:
        response = await http.get("/dev-ui/")
    assert response.status_code == 404


def test_a_directory_without_index_html_is_refused_at_start(memory_services, tmp_path):
    with pytest.raises(UsageError, match="has no index.html"):
        create_app(ApiSettings(dev_ui_dir=str(tmp_path)), memory_services)
