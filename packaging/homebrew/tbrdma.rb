# Homebrew formula for tbrdma: the Open MPI transport (BTL) for RDMA over Thunderbolt 5 between
# Macs, with its tools (tbrdma-info, tbrdma-doctor, tbrdma-setup).
#
# Homebrew's open-mpi ships no development headers, and a BTL must be built against exactly the
# Open MPI it is loaded into. So this formula carries the source tarball of one Open MPI release
# (the openmpi-source resource, which must be the version of Homebrew's open-mpi), configures it
# (configure only) with the arguments the installed Open MPI was configured with, and builds
# tbrdma against it (--with-ompi-source). It refuses, saying so, when the versions differ.
# Every step but Homebrew itself is packaging/homebrew/tbrdma-brew-build, which the tests run on
# Linux (test/integration/tools/homebrew_steps.sh).
#
# This file is the template: make-formula.sh fills in url and sha256 for a release tarball
# (`make dist`) and writes the tap's Formula/tbrdma.rb (README, "Cutting a release").
class Tbrdma < Formula
  desc "Open MPI transport for RDMA over Thunderbolt 5 between Macs"
  homepage "https://github.com/tbrdma/tbrdma"
  url "@TBRDMA_TARBALL_URL@"
  sha256 "@TBRDMA_TARBALL_SHA256@"
  license "BSD-3-Clause"

  depends_on "hwloc" => :build # Open MPI's configure, with Homebrew's open-mpi's arguments
  depends_on "libevent" => :build
  depends_on arch: :arm64
  depends_on macos: :tahoe # RDMA over Thunderbolt: macOS 26.2 or later
  depends_on "open-mpi"
  depends_on "pmix"

  # Must be the version of Homebrew's open-mpi (`brew info open-mpi`): when open-mpi moves,
  # update url and sha256 here (the sha256 is on the release page), then `brew reinstall tbrdma`.
  resource "openmpi-source" do
    url "https://download.open-mpi.org/release/open-mpi/v5.0/openmpi-5.0.9.tar.bz2"
    sha256 "dfb72762531170847af3e4a0f21d77d7b23cf36f67ce7ce9033659273677d80b"
  end

  def ompi_version
    Utils.safe_popen_read(Formula["open-mpi"].opt_bin/"ompi_info", "--version")[/Open MPI v(\S+)/, 1]
  end

  def install
    wanted = resource("openmpi-source").version.to_s
    if ompi_version != wanted
      odie <<~EOS
        tbrdma: Homebrew's open-mpi is #{ompi_version}, but this formula builds against the
        Open MPI #{wanted} source tree. tbrdma must be built against exactly the Open MPI it
        runs in. Update the openmpi-source resource of this formula to openmpi-#{ompi_version}
        (url and sha256 from https://www.open-mpi.org/software/ompi/), then reinstall tbrdma.
      EOS
    end

    (buildpath/"ompi-src").install resource("openmpi-source")
    libexec.install "packaging/homebrew/tbrdma-brew-build"
    system libexec/"tbrdma-brew-build",
           "--ompi-info", Formula["open-mpi"].opt_bin/"ompi_info",
           "--ompi-prefix", Formula["open-mpi"].opt_prefix,
           "--ompi-source", buildpath/"ompi-src",
           "--pmix", Formula["pmix"].opt_prefix,
           "--prefix", prefix,
           "--component-dir", lib/"openmpi",
           "--build-dir", buildpath/"build",
           "--tbrdma-source", buildpath,
           "--jobs", ENV.make_jobs.to_s
  end

  # Homebrew's Open MPI reads #{etc}/openmpi-mca-params.conf (its --sysconfdir): name the
  # component's directory there, once. opt_lib survives `brew upgrade tbrdma`.
  def post_install
    system libexec/"tbrdma-brew-build", "--params-only",
           "--params-file", etc/"openmpi-mca-params.conf",
           "--component-dir", opt_lib/"openmpi"
  end

  def caveats
    <<~EOS
      tbrdma is built for Open MPI #{resource("openmpi-source").version}. After every
      `brew upgrade open-mpi`, update this formula's openmpi-source resource and run
      `brew reinstall tbrdma`: a tbrdma built for another Open MPI steps aside.
      Check the whole cluster with: tbrdma-doctor --hostfile hosts.txt
      Collective algorithms measured for a Thunderbolt mesh, and tbrdma's own
      collectives component coll/tbrdma, both turned on by (docs/collectives.md):
        mpirun --tune #{opt_pkgshare}/coll-tuned.conf ...
    EOS
  end

  test do
    assert_match "built for Open MPI #{ompi_version}", shell_output("#{bin}/tbrdma-info --version")
    ENV["OMPI_MCA_opal_mca_base_component_path"] = "SYS_DEFAULT:#{opt_lib}/openmpi"
    assert_match "MCA btl: tbrdma", shell_output("#{Formula["open-mpi"].opt_bin}/ompi_info")
  end
end
