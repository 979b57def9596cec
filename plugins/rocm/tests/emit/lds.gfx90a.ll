; tilec rocm backend: amdgcn-amd-amdhsa for gfx90a
source_filename = "tilec"
target datalayout = "e-p:64:64-p1:64:64-p2:32:32-p3:32:32-p4:64:64-p5:32:32-p6:32:32-p7:160:256:256:32-p8:128:128-p9:192:256:256:32-i64:64-v16:16-v24:32-v32:32-v48:64-v96:128-v192:256-v256:256-v512:512-v1024:1024-v2048:2048-n32:64-S32-A5-G1-ni:7:8:9"
target triple = "amdgcn-amd-amdhsa"

@stage.lds = internal addrspace(3) global [4140 x i8] undef, align 16

define amdgpu_kernel void @stage(ptr addrspace(1) %p0, ptr addrspace(1) %p1, i32 %p2) #0 {
entry:
  %tid = call i32 @llvm.amdgcn.workitem.id.x(), !range !{i32 0, i32 256}
  %lane = and i32 %tid, 63
  %wave = lshr i32 %tid, 6
  %bid.x = call i32 @llvm.amdgcn.workgroup.id.x()
  %bid.y = call i32 @llvm.amdgcn.workgroup.id.y()
  %bid.z = call i32 @llvm.amdgcn.workgroup.id.z()
  %r0 = alloca [8 x half], align 16, addrspace(5)
  store [8 x half] zeroinitializer, ptr addrspace(5) %r0, align 16
  %r1 = alloca float, addrspace(5)
  store float 0.0, ptr addrspace(5) %r1
  %r2 = alloca i32, addrspace(5)
  store i32 0, ptr addrspace(5) %r2
  %v0 = mul i32 %bid.x, 2048
  %v1 = mul i32 %tid, 8
  %v2 = add i32 %v0, %v1
  store i32 %v2, ptr addrspace(5) %r2
  %v3 = load i32, ptr addrspace(5) %r2
  %v4 = add i32 %v3, 8
  %v5 = icmp sle i32 %v4, %p2
  br i1 %v5, label %do0, label %zero2
do0:
  %v6 = load i32, ptr addrspace(5) %r2
  %v7 = sext i32 %v6 to i64
  %v8 = getelementptr inbounds half, ptr addrspace(1) %p0, i64 %v7
  %v9 = load <8 x half>, ptr addrspace(1) %v8, align 16
  %v10 = extractelement <8 x half> %v9, i32 0
  %v11 = getelementptr inbounds half, ptr addrspace(5) %r0, i32 0
  store half %v10, ptr addrspace(5) %v11
  %v12 = extractelement <8 x half> %v9, i32 1
  %v13 = getelementptr inbounds half, ptr addrspace(5) %r0, i32 1
  store half %v12, ptr addrspace(5) %v13
  %v14 = extractelement <8 x half> %v9, i32 2
  %v15 = getelementptr inbounds half, ptr addrspace(5) %r0, i32 2
  store half %v14, ptr addrspace(5) %v15
  %v16 = extractelement <8 x half> %v9, i32 3
  %v17 = getelementptr inbounds half, ptr addrspace(5) %r0, i32 3
  store half %v16, ptr addrspace(5) %v17
  %v18 = extractelement <8 x half> %v9, i32 4
  %v19 = getelementptr inbounds half, ptr addrspace(5) %r0, i32 4
  store half %v18, ptr addrspace(5) %v19
  %v20 = extractelement <8 x half> %v9, i32 5
  %v21 = getelementptr inbounds half, ptr addrspace(5) %r0, i32 5
  store half %v20, ptr addrspace(5) %v21
  %v22 = extractelement <8 x half> %v9, i32 6
  %v23 = getelementptr inbounds half, ptr addrspace(5) %r0, i32 6
  store half %v22, ptr addrspace(5) %v23
  %v24 = extractelement <8 x half> %v9, i32 7
  %v25 = getelementptr inbounds half, ptr addrspace(5) %r0, i32 7
  store half %v24, ptr addrspace(5) %v25
  br label %done1
zero2:
  %v26 = getelementptr inbounds half, ptr addrspace(5) %r0, i32 0
  store half 0.0, ptr addrspace(5) %v26
  %v27 = getelementptr inbounds half, ptr addrspace(5) %r0, i32 1
  store half 0.0, ptr addrspace(5) %v27
  %v28 = getelementptr inbounds half, ptr addrspace(5) %r0, i32 2
  store half 0.0, ptr addrspace(5) %v28
  %v29 = getelementptr inbounds half, ptr addrspace(5) %r0, i32 3
  store half 0.0, ptr addrspace(5) %v29
  %v30 = getelementptr inbounds half, ptr addrspace(5) %r0, i32 4
  store half 0.0, ptr addrspace(5) %v30
  %v31 = getelementptr inbounds half, ptr addrspace(5) %r0, i32 5
  store half 0.0, ptr addrspace(5) %v31
  %v32 = getelementptr inbounds half, ptr addrspace(5) %r0, i32 6
  store half 0.0, ptr addrspace(5) %v32
  %v33 = getelementptr inbounds half, ptr addrspace(5) %r0, i32 7
  store half 0.0, ptr addrspace(5) %v33
  br label %done1
done1:
  %v34 = getelementptr inbounds half, ptr addrspace(5) %r0, i32 0
  %v35 = load half, ptr addrspace(5) %v34
  %v36 = insertelement <8 x half> poison, half %v35, i32 0
  %v37 = getelementptr inbounds half, ptr addrspace(5) %r0, i32 1
  %v38 = load half, ptr addrspace(5) %v37
  %v39 = insertelement <8 x half> %v36, half %v38, i32 1
  %v40 = getelementptr inbounds half, ptr addrspace(5) %r0, i32 2
  %v41 = load half, ptr addrspace(5) %v40
  %v42 = insertelement <8 x half> %v39, half %v41, i32 2
  %v43 = getelementptr inbounds half, ptr addrspace(5) %r0, i32 3
  %v44 = load half, ptr addrspace(5) %v43
  %v45 = insertelement <8 x half> %v42, half %v44, i32 3
  %v46 = getelementptr inbounds half, ptr addrspace(5) %r0, i32 4
  %v47 = load half, ptr addrspace(5) %v46
  %v48 = insertelement <8 x half> %v45, half %v47, i32 4
  %v49 = getelementptr inbounds half, ptr addrspace(5) %r0, i32 5
  %v50 = load half, ptr addrspace(5) %v49
  %v51 = insertelement <8 x half> %v48, half %v50, i32 5
  %v52 = getelementptr inbounds half, ptr addrspace(5) %r0, i32 6
  %v53 = load half, ptr addrspace(5) %v52
  %v54 = insertelement <8 x half> %v51, half %v53, i32 6
  %v55 = getelementptr inbounds half, ptr addrspace(5) %r0, i32 7
  %v56 = load half, ptr addrspace(5) %v55
  %v57 = insertelement <8 x half> %v54, half %v56, i32 7
  %v58 = getelementptr inbounds i8, ptr addrspace(3) @stage.lds, i32 0
  %v59 = mul i32 %tid, 8
  %v60 = getelementptr inbounds half, ptr addrspace(3) %v58, i32 %v59
  store <8 x half> %v57, ptr addrspace(3) %v60, align 16
  %v61 = icmp eq i32 %tid, 0
  br i1 %v61, label %then3, label %endif4
then3:
  store float 0x3FF0000000000000, ptr addrspace(5) %r1
  %v62 = load float, ptr addrspace(5) %r1
  %v63 = getelementptr inbounds i8, ptr addrspace(3) @stage.lds, i32 4112
  %v64 = getelementptr inbounds float, ptr addrspace(3) %v63, i32 0
  store float %v62, ptr addrspace(3) %v64, align 4
  br label %endif4
endif4:
  fence syncscope("workgroup") release
  call void @llvm.amdgcn.s.barrier()
  fence syncscope("workgroup") acquire
  %v65 = getelementptr inbounds i8, ptr addrspace(3) @stage.lds, i32 0
  %v66 = sub i32 255, %tid
  %v67 = mul i32 %v66, 8
  %v68 = getelementptr inbounds half, ptr addrspace(3) %v65, i32 %v67
  %v69 = load <8 x half>, ptr addrspace(3) %v68, align 16
  %v70 = extractelement <8 x half> %v69, i32 0
  %v71 = getelementptr inbounds half, ptr addrspace(5) %r0, i32 0
  store half %v70, ptr addrspace(5) %v71
  %v72 = extractelement <8 x half> %v69, i32 1
  %v73 = getelementptr inbounds half, ptr addrspace(5) %r0, i32 1
  store half %v72, ptr addrspace(5) %v73
  %v74 = extractelement <8 x half> %v69, i32 2
  %v75 = getelementptr inbounds half, ptr addrspace(5) %r0, i32 2
  store half %v74, ptr addrspace(5) %v75
  %v76 = extractelement <8 x half> %v69, i32 3
  %v77 = getelementptr inbounds half, ptr addrspace(5) %r0, i32 3
  store half %v76, ptr addrspace(5) %v77
  %v78 = extractelement <8 x half> %v69, i32 4
  %v79 = getelementptr inbounds half, ptr addrspace(5) %r0, i32 4
  store half %v78, ptr addrspace(5) %v79
  %v80 = extractelement <8 x half> %v69, i32 5
  %v81 = getelementptr inbounds half, ptr addrspace(5) %r0, i32 5
  store half %v80, ptr addrspace(5) %v81
  %v82 = extractelement <8 x half> %v69, i32 6
  %v83 = getelementptr inbounds half, ptr addrspace(5) %r0, i32 6
  store half %v82, ptr addrspace(5) %v83
  %v84 = extractelement <8 x half> %v69, i32 7
  %v85 = getelementptr inbounds half, ptr addrspace(5) %r0, i32 7
  store half %v84, ptr addrspace(5) %v85
  %v86 = load i32, ptr addrspace(5) %r2
  %v87 = add i32 %v86, 8
  %v88 = icmp sle i32 %v87, %p2
  br i1 %v88, label %do5, label %done6
do5:
  %v89 = getelementptr inbounds half, ptr addrspace(5) %r0, i32 0
  %v90 = load half, ptr addrspace(5) %v89
  %v91 = insertelement <8 x half> poison, half %v90, i32 0
  %v92 = getelementptr inbounds half, ptr addrspace(5) %r0, i32 1
  %v93 = load half, ptr addrspace(5) %v92
  %v94 = insertelement <8 x half> %v91, half %v93, i32 1
  %v95 = getelementptr inbounds half, ptr addrspace(5) %r0, i32 2
  %v96 = load half, ptr addrspace(5) %v95
  %v97 = insertelement <8 x half> %v94, half %v96, i32 2
  %v98 = getelementptr inbounds half, ptr addrspace(5) %r0, i32 3
  %v99 = load half, ptr addrspace(5) %v98
  %v100 = insertelement <8 x half> %v97, half %v99, i32 3
  %v101 = getelementptr inbounds half, ptr addrspace(5) %r0, i32 4
  %v102 = load half, ptr addrspace(5) %v101
  %v103 = insertelement <8 x half> %v100, half %v102, i32 4
  %v104 = getelementptr inbounds half, ptr addrspace(5) %r0, i32 5
  %v105 = load half, ptr addrspace(5) %v104
  %v106 = insertelement <8 x half> %v103, half %v105, i32 5
  %v107 = getelementptr inbounds half, ptr addrspace(5) %r0, i32 6
  %v108 = load half, ptr addrspace(5) %v107
  %v109 = insertelement <8 x half> %v106, half %v108, i32 6
  %v110 = getelementptr inbounds half, ptr addrspace(5) %r0, i32 7
  %v111 = load half, ptr addrspace(5) %v110
  %v112 = insertelement <8 x half> %v109, half %v111, i32 7
  %v113 = load i32, ptr addrspace(5) %r2
  %v114 = sext i32 %v113 to i64
  %v115 = getelementptr inbounds half, ptr addrspace(1) %p1, i64 %v114
  store <8 x half> %v112, ptr addrspace(1) %v115, align 16
  br label %done6
done6:
  ret void
}

declare void @llvm.amdgcn.s.barrier()
declare i32 @llvm.amdgcn.workgroup.id.x()
declare i32 @llvm.amdgcn.workgroup.id.y()
declare i32 @llvm.amdgcn.workgroup.id.z()
declare i32 @llvm.amdgcn.workitem.id.x()

attributes #0 = { "amdgpu-flat-work-group-size"="256,256" "uniform-work-group-size"="true" "target-cpu"="gfx90a" "denormal-fp-math"="ieee,ieee" "denormal-fp-math-f32"="ieee,ieee" }

!llvm.module.flags = !{!0}
!0 = !{i32 1, !"amdhsa_code_object_version", i32 500}
